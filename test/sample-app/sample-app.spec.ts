import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import request from 'supertest';

import { ZkLockBackend, type LockContender } from '../../lib/index';
import { SampleAppProcess } from '../../sample-app/demo/sample-app.process';
import { showLock, type Reservation } from '../../sample-app/src/shows/show.model';
import { waitFor } from '../support/wait-for';
import { zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

// The sample app's lock root (sample-app/src/app.module.ts); each test uses shows of its own.
const ROOT = '/sample-app';
const newShow = (): string => `show-${randomBytes(4).toString('hex')}`;

describe('sample app: instances in separate processes contend over HTTP', () => {
  let storeDir: string;
  const apps: SampleAppProcess[] = [];
  let locks: ZkLockBackend;
  let inspector: ZkInspector;

  const start = (instance: string, env?: Record<string, string>): Promise<SampleAppProcess> =>
    SampleAppProcess.start({ zkConnect: zkConnect(), storeDir, instance, entry: 'source', env }).then(
      (app) => (apps.push(app), app),
    );
  const lockNodes = async (show: string): Promise<string[]> =>
    (await inspector.children(locks.pathOf(showLock(show)))) ?? [];
  const queue = async (app: SampleAppProcess, show: string): Promise<LockContender[]> =>
    (await request(app.url).get(`/shows/${show}/lock`).expect(200)).body.contenders;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-sample-app-'));
    inspector = await ZkInspector.connect(zkConnect());
    // A third party on the same locks, to hold a show's lock while the instances queue.
    locks = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: ROOT, identity: 'the test' });
    await Promise.all([start('one'), start('two')]);
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await locks?.close();
    await inspector?.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('GET /health: each instance reports its ZooKeeper session up (terminus)', async () => {
    for (const app of apps) {
      const { body } = await request(app.url).get('/health').expect(200);
      expect(body.info.zookeeper).toMatchObject({
        status: 'up',
        state: 'connected',
        sessionId: expect.stringMatching(/^0x/),
      });
    }
  });

  it('sells exactly the seats when reservations race over both instances', async () => {
    const [one, two] = apps;
    const show = newShow();
    await request(one.url).put(`/shows/${show}`).send({ seats: 40 }).expect(200);

    // Hold the show's lock so that every reservation queues behind it, then let them go.
    const held = await locks.acquire(showLock(show));
    const reserve = (i: number) =>
      request([one, two][i % 2].url)
        .post(`/shows/${show}/reservations`)
        .send({ customer: `c${i}` });
    const sent = Array.from({ length: 48 }, (_, i) => reserve(i).then((r) => r)); // then(): sent now, not when awaited
    const waiting = await waitFor(
      async () => {
        const contenders = await queue(two, show);
        return contenders.length === 49 ? contenders : undefined;
      },
      { timeoutMs: 15_000, what: '48 reservations queued on the show lock' },
    );
    await sleep(300); // every reservation waits at least this long
    await held.release();
    const answers = await Promise.all(sent);

    // The queue, as the API reports it: the test holding, both instances waiting.
    expect(waiting.filter((c) => c.holding).map((c) => c.identity)).toEqual(['the test']);
    expect(new Set(waiting.filter((c) => !c.holding).map((c) => c.identity?.split(' ')[0]))).toEqual(
      new Set(['one', 'two']),
    );
    // Exactly the seats sold; the rest told "sold out"; no update lost.
    expect(answers.filter((a) => a.status === 201)).toHaveLength(40);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(8);
    const availability = await request(two.url).get(`/shows/${show}`).expect(200);
    expect(availability.body).toEqual({ id: show, seats: 40, remaining: 0, reserved: 40 });
    const recorded: Reservation[] = (await request(one.url).get(`/shows/${show}/reservations`).expect(200)).body;
    expect(recorded.map((r) => r.customer).sort()).toEqual(
      answers
        .filter((a) => a.status === 201)
        .map((a) => a.body.customer)
        .sort(),
    );
    expect(new Set(recorded.map((r) => r.instance))).toEqual(new Set(['one', 'two']));
    // Fencing tokens, in the order the store recorded them, strictly increase.
    const tokens = recorded.map((r) => BigInt(r.fencingToken!));
    tokens.slice(1).forEach((token, i) => expect(token).toBeGreaterThan(tokens[i]));
    // Each confirmed request reports how long it waited (300 ms behind the test, at least) and held.
    const timings = answers.filter((a) => a.status === 201).map((a) => a.body.timing);
    expect(Math.min(...timings.map((t) => t.waitMs))).toBeGreaterThanOrEqual(295);
    expect(Math.min(...timings.map((t) => t.holdMs))).toBeGreaterThan(0);
    // Nothing left in ZooKeeper: every node deleted (each instance answered once its delete was sent).
    await inspector.emptied(locks.pathOf(showLock(show)));
    expect(await queue(one, show)).toEqual([]);
  });

  it('reads availability under a shared lock: alongside readers, not during a write', async () => {
    const [one] = apps;
    const show = newShow();
    await request(one.url).put(`/shows/${show}`).send({ seats: 3 }).expect(200);

    const reader = await locks.acquire(showLock(show), { mode: 'read' });
    await request(one.url).get(`/shows/${show}`).expect(200, { id: show, seats: 3, remaining: 3, reserved: 0 });
    await reader.release();

    const writer = await locks.acquire(showLock(show));
    let answered = false;
    const read = request(one.url)
      .get(`/shows/${show}`)
      .then((r) => ((answered = true), r));
    await waitFor(async () => (await lockNodes(show)).length === 2, { what: 'the read to queue behind the writer' });
    expect(answered).toBe(false);
    await writer.release();
    expect((await read).body).toEqual({ id: show, seats: 3, remaining: 3, reserved: 0 });
    await inspector.emptied(locks.pathOf(showLock(show))); // the instance answered once its delete was sent
  });

  it('shuts down cleanly on SIGTERM while holding a lock and with a request waiting', async () => {
    const [one] = apps;
    const show = newShow();
    // Slow store: a reservation holds the lock for about 2 x 800 ms.
    const slow = await start('slow', { STORE_DELAY_MS: '800' });
    await request(one.url).put(`/shows/${show}`).send({ seats: 5 }).expect(200);

    const holding = request(slow.url)
      .post(`/shows/${show}/reservations`)
      .send({ customer: 'holder' })
      .then((r) => r);
    await waitFor(async () => (await queue(one, show)).some((c) => c.holding && c.identity?.startsWith('slow')), {
      what: 'the slow instance to hold the lock',
    });
    const waiting = request(slow.url)
      .post(`/shows/${show}/reservations`)
      .send({ customer: 'waiter' })
      .then((r) => r);
    await waitFor(async () => (await lockNodes(show)).length === 2, { what: 'a second request to queue' });

    const exit = await slow.stop();
    const [held, waited] = await Promise.all([holding, waiting]);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(held.status).toBe(201); // the request in flight was finished, not cut off
    expect(waited.status).toBe(503); // the wait was cancelled at shutdown: retry on another instance
    // The session was closed, not left to expire: its nodes are gone at once.
    expect(await lockNodes(show)).toEqual([]);
    const recorded: Reservation[] = (await request(one.url).get(`/shows/${show}/reservations`).expect(200)).body;
    expect(recorded.map((r) => r.customer)).toEqual(['holder']);
  });
});
