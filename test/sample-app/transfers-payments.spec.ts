import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import request from 'supertest';

import { ZkLockBackend, type LeaseContender, type LockContender } from '../../lib/index';
import { PaymentPartnerStub } from '../../sample-app/demo/payment-partner.stub';
import { SampleAppProcess } from '../../sample-app/demo/sample-app.process';
import { PARTNER_LEASE, PARTNER_MAX_CONCURRENT } from '../../sample-app/src/payments/payment.model';
import { showLock } from '../../sample-app/src/shows/show.model';
import { waitFor } from '../support/wait-for';
import { zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

// The sample app's lock root (sample-app/src/app.module.ts); each test uses shows of its own.
const ROOT = '/sample-app';
const newShows = (): [string, string] => {
  const base = `show-${randomBytes(4).toString('hex')}`;
  return [`${base}-matinee`, `${base}-evening`];
};

describe('sample app: transfers (multi-lock) and payments (lease) from separate processes', () => {
  let storeDir: string;
  let apps: SampleAppProcess[] = [];
  let partner: PaymentPartnerStub;
  let locks: ZkLockBackend;
  let inspector: ZkInspector;

  const queue = async (app: SampleAppProcess, show: string): Promise<LockContender[]> =>
    (await request(app.url).get(`/shows/${show}/lock`).expect(200)).body.contenders;
  const seats = async (app: SampleAppProcess, show: string): Promise<number> =>
    (await request(app.url).get(`/shows/${show}`).expect(200)).body.seats;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-sample-app-'));
    inspector = await ZkInspector.connect(zkConnect());
    // A third party on the same locks, to hold both shows (or every lease) while the instances queue.
    locks = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: ROOT, identity: 'the test' });
    // 100 ms a charge: the charges let go together overlap at the partner.
    partner = await PaymentPartnerStub.start({ latencyMs: 100 });
    const env = { PARTNER_URL: partner.url };
    apps = await Promise.all(
      ['one', 'two'].map((instance) =>
        SampleAppProcess.start({ zkConnect: zkConnect(), storeDir, instance, entry: 'source', env }),
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await partner?.close();
    await locks?.close();
    await inspector?.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('transfers in opposite directions from both instances, released at once: all done, no deadlock, no seat lost or created', async () => {
    const [one, two] = apps;
    const [matinee, evening] = newShows();
    await Promise.all(
      [matinee, evening].map((show) => request(one.url).put(`/shows/${show}`).send({ seats: 20 }).expect(200)),
    );

    // Hold both shows (as a long reset would) so that every transfer queues, then let them all go.
    const held = await locks.acquireAll([showLock(matinee), showLock(evening)]);
    const transfer = (i: number) =>
      i % 2 === 0
        ? request(one.url).post(`/shows/${matinee}/transfers`).send({ to: evening, seats: 1 })
        : request(two.url).post(`/shows/${evening}/transfers`).send({ to: matinee, seats: 1 });
    const sent = Array.from({ length: 20 }, (_, i) => transfer(i).then((r) => r)); // then(): sent now, not when awaited
    const waiting = await waitFor(
      async () => {
        const contenders = [...(await queue(two, matinee)), ...(await queue(two, evening))].filter((c) => !c.holding);
        return contenders.length >= 20 ? contenders : undefined;
      },
      { timeoutMs: 15_000, what: '20 transfers queued on the two show locks' },
    );
    await sleep(300); // every transfer waits at least this long
    await held.release();
    const answers = await Promise.all(sent);

    expect(new Set(waiting.map((c) => c.identity?.split(' ')[0]))).toEqual(new Set(['one', 'two']));
    // No deadlock: every transfer done (a deadlock would answer 423 after the 10 s acquire timeout).
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    // Ten seats each way: both shows hold what they started with, seats and free seats alike.
    expect(await seats(two, matinee)).toBe(20);
    expect(await seats(one, evening)).toBe(20);
    expect((await request(two.url).get(`/shows/${matinee}`).expect(200)).body).toMatchObject({
      remaining: 20,
      reserved: 0,
    });
    // Each transfer held both locks: a grant of each show's lock, whose fencing tokens never repeat.
    for (const show of [matinee, evening]) {
      const tokens = answers.map((a) =>
        a.body.from.id === show ? a.body.fencingTokens.from : a.body.fencingTokens.to,
      );
      expect(new Set(tokens).size).toBe(20);
    }
    expect(Math.min(...answers.map((a) => a.body.timing.waitMs))).toBeGreaterThanOrEqual(295);
    // Nothing left in ZooKeeper (each instance answered once its deletes were sent).
    await inspector.emptied(locks.pathOf(showLock(matinee)));
    await inspector.emptied(locks.pathOf(showLock(evening)));
  });

  it(`charges from both instances at once: never more than ${PARTNER_MAX_CONCURRENT} at the partner, none refused`, async () => {
    const [one, two] = apps;
    partner.reset();
    const leaseQueue = async (): Promise<LeaseContender[]> =>
      (await request(two.url).get('/payments/partner').expect(200)).body.contenders;
    // Take every lease (another client of the same semaphore) so that all charges queue, then let them go.
    const leases = await Promise.all(
      Array.from({ length: PARTNER_MAX_CONCURRENT }, () =>
        locks.acquireLease(PARTNER_LEASE, { maxLeases: PARTNER_MAX_CONCURRENT }),
      ),
    );
    const charge = (i: number) =>
      request([one, two][i % 2].url)
        .post('/payments')
        .send({ customer: `c${i}`, amountCents: 4500 });
    const sent = Array.from({ length: 15 }, (_, i) => charge(i).then((r) => r));
    const waiting = await waitFor(
      async () => {
        const contenders = await leaseQueue();
        return contenders.length === 18 ? contenders : undefined;
      },
      { timeoutMs: 15_000, what: '15 charges queued for a lease' },
    );
    await sleep(300); // every charge waits at least this long
    await Promise.all(leases.map((lease) => lease.release()));
    let answered = false;
    const all = Promise.all(sent).finally(() => (answered = true));
    const queues: LeaseContender[][] = []; // the lease's queue as the app reports it, while the charges run
    while (!answered) queues.push(await leaseQueue());
    const answers = await all;

    expect(waiting.filter((c) => c.holding).map((c) => c.identity)).toEqual(
      Array(PARTNER_MAX_CONCURRENT).fill('the test'),
    );
    expect(new Set(waiting.filter((c) => !c.holding).map((c) => c.identity?.split(' ')[0]))).toEqual(
      new Set(['one', 'two']),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(201));
    expect(Math.min(...answers.map((a) => a.body.timing.waitMs))).toBeGreaterThanOrEqual(295);
    // What the partner counted, over both instances: 3 at once at most, so it refused nothing.
    expect(partner.stats()).toEqual({
      calls: 15,
      charged: 15,
      overloads: 0,
      peak: PARTNER_MAX_CONCURRENT,
      maxConcurrent: PARTNER_MAX_CONCURRENT,
    });
    for (const contenders of queues)
      expect(contenders.filter((c) => c.holding).length).toBeLessThanOrEqual(PARTNER_MAX_CONCURRENT);
    // Every lease given back: the semaphore is empty in ZooKeeper.
    await inspector.emptied(locks.pathOf(PARTNER_LEASE));
    expect(await leaseQueue()).toEqual([]);
  });
});
