import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  InvalidLockNameError,
  LockReentryError,
  LockRevocationRequestedError,
  LockService,
  WithLease,
  WithLock,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { backendOf, lockNodes, startApp } from './nest-fixture';

/** The Curator lock family through LockService and @WithLock: multi-lock, non-reentrant, revocation, listing. */

@Injectable()
class Accounts {
  readonly balances = new Map<string, number>([
    ['a', 100],
    ['b', 100],
  ]);
  inside = 0;
  most = 0;

  constructor(readonly locks: LockService) {}

  /** Both accounts locked together, whatever order the caller names them in. */
  @WithLock((from: string, to: string) => [`account:${from}`, `account:${to}`])
  async transfer(from: string, to: string, amount: number): Promise<void> {
    this.most = Math.max(this.most, ++this.inside);
    const [a, b] = [this.balances.get(from)!, this.balances.get(to)!];
    await sleep(2);
    this.balances.set(from, a - amount);
    this.balances.set(to, b + amount);
    this.inside--;
  }

  @WithLock((from: string, to: string) => [`account:${from}`, `account:${to}`], { mode: 'read' })
  async audit(from: string, to: string, whileInside: () => Promise<void>): Promise<number> {
    await whileInside();
    return this.balances.get(from)! + this.balances.get(to)!;
  }

  @WithLock('report', { revocable: true })
  async report(): Promise<string> {
    const { revocation } = this.locks.held('report')!;
    await new Promise<void>((resolve) => revocation.addEventListener('abort', () => resolve(), { once: true }));
    return (revocation.reason as Error).constructor.name;
  }
}

describe('the lock family through LockService', () => {
  const root = uniqueRoot('nest-family');
  let app: INestApplication;
  let accounts: Accounts;
  let locks: LockService;
  beforeAll(async () => {
    app = await startApp({ providers: [Accounts] }, {}, root);
    accounts = app.get(Accounts);
    locks = app.get(LockService);
  });
  afterAll(() => app.close());

  it('@WithLock with a key function returning two names: opposite transfers never deadlock nor overlap', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? accounts.transfer('a', 'b', 1) : accounts.transfer('b', 'a', 1))),
    );
    expect(accounts.most).toBe(1);
    expect(accounts.balances.get('a')! + accounts.balances.get('b')!).toBe(200);
    expect(await lockNodes(app, 'account:a')).toBeNull();
  });

  it("the decorator's mode applies to every name: readers of both accounts share, one node per name each", async () => {
    let nodes: Array<string[] | null> = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = accounts.audit('a', 'b', () => gate);
    await waitUntil(async () => (await lockNodes(app, 'account:b'))?.length === 1, 'the first audit holds both');
    const second = accounts.audit('b', 'a', async () => {
      nodes = await Promise.all(['account:a', 'account:b'].map((name) => lockNodes(app, name)));
    });
    await expect(second).resolves.toBe(200); // ran while the first audit held both for read
    expect(nodes.map((n) => n?.filter((node) => node.includes('__rlock__')).length)).toEqual([2, 2]);
    release();
    await expect(first).resolves.toBe(200);
  });

  it('acquireAll and withLocks on the service; reentrant: false inside a hold fails at once', async () => {
    const group = await locks.acquireAll(['x', { name: 'y', mode: 'read' }]);
    expect(group.names).toEqual(['x', 'y']);
    await group.release();
    const result = await locks.withLocks(['p', 'q'], async () => {
      const error = await locks.acquireAll(['q', 'r'], { reentrant: false }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockReentryError);
      return locks.withLock('q', () => 'joined'); // nested and reentrant: no wait
    });
    expect(result).toBe('joined');
    expect(await lockNodes(app, 'r')).toBeNull();
  });

  it("withLocks with ifLocked 'skip' resolves undefined when one name is taken, and leaves nothing", async () => {
    const held = await locks.acquire('busy'); // acquire() does not make the code after it the holder: the next call queues
    await expect(locks.withLocks(['free', 'busy'], () => 'ran', { ifLocked: 'skip' })).resolves.toBeUndefined();
    expect(await lockNodes(app, 'free')).toBeNull();
    await held.release();
  });

  it('requestRevocation reaches a revocable @WithLock holder through its handle, and locks() lists it', async () => {
    const running = accounts.report();
    await waitUntil(async () => (await lockNodes(app, 'report'))?.length === 1, 'the report holds its lock');
    const listed = await locks.locks('rep');
    expect(listed).toEqual([
      expect.objectContaining({
        kind: 'lock',
        name: 'report',
        waiters: [],
        holders: [expect.objectContaining({ mode: 'write', since: expect.any(Date) })],
      }),
    ]);
    await expect(locks.requestRevocation('report')).resolves.toBe(1);
    await expect(running).resolves.toBe(LockRevocationRequestedError.name);
    expect(await locks.locks('rep')).toEqual([]);
  });

  it("releasesConfirmed() on the service waits for the backend's: then another connection finds @WithLock's nodes gone", async () => {
    const asked = jest.spyOn(backendOf(app), 'releasesConfirmed');
    try {
      await Promise.all([accounts.transfer('a', 'b', 1), accounts.transfer('b', 'a', 1)]);
      await locks.releasesConfirmed();
      expect(asked).toHaveBeenCalledTimes(1);
      const left = await Promise.all(['account:a', 'account:b'].map((name) => lockNodes(app, name)));
      expect(left.map((nodes) => nodes ?? [])).toEqual([[], []]);
    } finally {
      asked.mockRestore();
    }
  });
});

/** Calls in flight across every instance of the test (one process). */
const partnerCalls = { inFlight: 0, most: 0 };

@Injectable()
class PartnerApi {
  @WithLease('partner-api', { maxLeases: 2 })
  async quote(ms: number): Promise<number> {
    partnerCalls.most = Math.max(partnerCalls.most, ++partnerCalls.inFlight);
    await sleep(ms);
    partnerCalls.inFlight--;
    return ms;
  }

  @WithLease((partner: unknown) => partner as string, { maxLeases: 1 })
  async quoteFrom(_partner: unknown): Promise<string> {
    return 'quoted';
  }
}

describe('leases through LockService and @WithLease', () => {
  const root = uniqueRoot('nest-leases');
  let apps: INestApplication[];
  beforeAll(async () => {
    apps = await Promise.all([
      startApp({ providers: [PartnerApi] }, {}, root),
      startApp({ providers: [PartnerApi] }, {}, root),
    ]);
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it('at most maxLeases calls run at once across two instances; nothing is left behind', async () => {
    const partners = apps.map((app) => app.get(PartnerApi));
    await Promise.all(Array.from({ length: 12 }, (_, i) => partners[i % 2].quote(15)));
    expect(partnerCalls.most).toBe(2); // 12 callers wanted in: never more than two at once
    expect(await apps[0].get(LockService).leaseContenders('partner-api')).toEqual([]);
  });

  it('withLease on the service; a different maxLeases is refused at once', async () => {
    const locks = apps[0].get(LockService);
    await expect(locks.withLease('partner-api', (lease) => lease.maxLeases, { maxLeases: 2 })).resolves.toBe(2);
    const held = await locks.acquireLease('partner-api', { maxLeases: 2 });
    await expect(locks.acquireLease('partner-api', { maxLeases: 3 })).rejects.toMatchObject({
      name: 'LeaseLimitMismatchError',
    });
    await held.release();
  });

  it("@WithLease's key function: a name per call; one that throws or returns no string fails naming the decorator, nothing sent", async () => {
    const partner = apps[0].get(PartnerApi);
    await expect(partner.quoteFrom('partner-x')).resolves.toBe('quoted');
    const error = await partner.quoteFrom(42).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockNameError);
    expect((error as Error).message).toMatch(
      /the key function of @WithLease on PartnerApi\.quoteFrom must return a non-empty string/,
    );
    expect(await apps[0].get(LockService).leaseContenders('partner-x')).toEqual([]);
  });

  it('@WithLease refuses a bad maxLeases when the class is defined', () => {
    expect(() => WithLease('x', { maxLeases: 0 })).toThrow(/@WithLease: Invalid option maxLeases=0/);
    expect(() => WithLease('x', { maxLeases: 1.5 })).toThrow(/maxLeases/);
    expect(() => WithLease('', { maxLeases: 1 })).toThrow(/needs a semaphore name/);
  });
});
