import {
  InMemoryLockBackend,
  InMemoryLockStore,
  InvalidLockNameError,
  InvalidOptionError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  type LockBackend,
} from '../../lib/index';
import type { LeaseHandle } from '../../lib/core/port/lock-backend';
import { LeaseLimitMismatchError, LockKindMismatchError } from '../../lib/core/errors/errors';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

interface Setup {
  /** `count` clients of one lock service. */
  clients(count: number): Promise<LockBackend[]>;
  /** How many waiters queue on `name` (for ordering the test's waiters). */
  queued(name: string, count: number, via: LockBackend): Promise<void>;
  close(): Promise<void>;
}

function inMemory(): Setup {
  const store = new InMemoryLockStore();
  const made: InMemoryLockBackend[] = [];
  return {
    clients: async (count) =>
      Array.from(
        { length: count },
        (_, i) => (made[made.length] = new InMemoryLockBackend({ store, identity: `client-${i}` })),
      ),
    queued: (name, count, via) =>
      waitUntil(async () => (await via.leaseContenders(name)).length === count, `${count} contenders on ${name}`),
    close: async () => void (await Promise.all(made.map((backend) => backend.close()))),
  };
}

function onZooKeeper(): Setup {
  let fx: LockFixture | undefined;
  return {
    clients: async (count) => {
      fx ??= await LockFixture.create('lease-backends');
      return Promise.all(Array.from({ length: count }, (_, i) => fx!.backend({ identity: `client-${i}` })));
    },
    queued: (name, count) => fx!.queued(name, count),
    close: async () => fx?.cleanup(),
  };
}

/** The semantics both backends share: what users' unit tests (in memory) rely on being true on ZooKeeper. */
describe.each([
  ['InMemoryLockBackend', inMemory],
  ['ZkLockBackend', onZooKeeper],
])('leases on %s', (_, setup) => {
  let env: Setup;
  beforeAll(() => (env = setup()));
  afterAll(() => env.close());

  const failure = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => new Error('expected a rejection'),
      (error: unknown) => error,
    );

  it('admits maxLeases holders, then serves waiters first come, first served', async () => {
    const clients = await env.clients(5);
    const held = [
      await clients[0].acquireLease('fifo', { maxLeases: 2 }),
      await clients[1].acquireLease('fifo', { maxLeases: 2 }),
    ];
    const order: number[] = [];
    const waits: Promise<LeaseHandle>[] = [];
    for (const i of [2, 3, 4]) {
      waits.push(
        clients[i].acquireLease('fifo', { maxLeases: 2, timeoutMs: 20_000 }).then((lease) => (order.push(i), lease)),
      );
      await env.queued('fifo', i + 1, clients[0]);
    }
    expect((await clients[0].leaseContenders('fifo')).map((c) => [c.identity, c.holding])).toEqual([
      ['client-0', true],
      ['client-1', true],
      ['client-2', false],
      ['client-3', false],
      ['client-4', false],
    ]);
    await held[1].release();
    const third = await waits[0];
    expect(order).toEqual([2]);
    await held[0].release();
    await third.release();
    const rest = await Promise.all(waits.slice(1));
    expect(order).toEqual([2, 3, 4]);
    await Promise.all(rest.map((lease) => lease.release()));
    await Promise.all(rest.map((lease) => lease.releaseConfirmed));
    expect(await clients[0].leaseContenders('fifo')).toEqual([]);
  });

  it('timeoutMs 0, a timeout and an abort reject with typed errors and leave nothing queued', async () => {
    const [a, b] = await env.clients(2);
    const held = await a.acquireLease('busy', { maxLeases: 1 });
    await expect(b.acquireLease('busy', { maxLeases: 1, timeoutMs: 0 })).rejects.toMatchObject({
      name: 'LockTimeoutError',
      mode: 'lease',
      timeoutMs: 0,
    });
    const timedOut = await failure(b.acquireLease('busy', { maxLeases: 1, timeoutMs: 50 }));
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect((timedOut as Error).message).toBe(
      'Timed out after 50 ms waiting for one of the 1 leases of "busy". Raise timeoutMs, or list holders and waiters with leaseContenders("busy").',
    );
    const controller = new AbortController();
    const aborted = failure(b.acquireLease('busy', { maxLeases: 1, signal: controller.signal }));
    await env.queued('busy', 2, a);
    controller.abort('enough');
    expect(await aborted).toBeInstanceOf(LockAbortedError);
    await expect(b.acquireLease('busy', { maxLeases: 1, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      LockAbortedError,
    );
    expect((await a.leaseContenders('busy')).map((c) => c.holding)).toEqual([true]);
    await held.release();
  });

  it('a handle: released once (the same promise), `await using`, isHeld and assertHeld', async () => {
    const [a] = await env.clients(1);
    {
      await using lease = await a.acquireLease('handle', { maxLeases: 1 });
      expect([lease.name, lease.maxLeases, lease.released, lease.isHeld(), lease.signal.aborted]).toEqual([
        'handle',
        1,
        false,
        true,
        false,
      ]);
    }
    const lease = await a.acquireLease('handle', { maxLeases: 1, timeoutMs: 0 });
    expect(lease.release()).toBe(lease.release());
    await lease.release();
    expect(lease.isHeld()).toBe(false);
    expect(() => lease.assertHeld()).toThrow(LockLostError);
  });

  it('refuses another count, a lock on a semaphore and a semaphore on a lock, at once', async () => {
    const [a, b] = await env.clients(2);
    const lease = await a.acquireLease('kinds', { maxLeases: 3 });
    await expect(b.acquireLease('kinds', { maxLeases: 2 })).rejects.toEqual(
      expect.objectContaining({ name: 'LeaseLimitMismatchError', requested: 2, stored: 3 }),
    );
    await expect(b.acquireLease('kinds', { maxLeases: 2 })).rejects.toBeInstanceOf(LeaseLimitMismatchError);
    await expect(b.acquire('kinds', { timeoutMs: 0 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      requested: 'lock',
      found: 'lease',
      maxLeases: 3,
    });
    await expect(b.tryAcquire('kinds')).rejects.toBeInstanceOf(LockKindMismatchError);
    await expect(b.contenders('kinds')).rejects.toBeInstanceOf(LockKindMismatchError);
    expect((await a.leaseContenders('kinds')).length).toBe(1);
    const lock = await a.acquire('a-lock');
    await expect(b.acquireLease('a-lock', { maxLeases: 3 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      requested: 'lease',
      found: 'lock',
    });
    await expect(b.leaseContenders('a-lock')).rejects.toBeInstanceOf(LockKindMismatchError);
    expect((await a.contenders('a-lock')).length).toBe(1);
    await Promise.all([lease.release(), lock.release()]);
  });

  it('checks options and the name before anything else', async () => {
    const [a] = await env.clients(1);
    await expect(a.acquireLease('x', { maxLeases: 0 })).rejects.toMatchObject({
      name: 'InvalidOptionError',
      option: 'maxLeases',
    });
    await expect(a.acquireLease('x', { maxLeases: 2, mode: 'read' } as never)).rejects.toMatchObject({
      name: 'InvalidOptionError',
      option: 'mode',
    });
    await expect(a.acquireLease('', { maxLeases: 2 })).rejects.toBeInstanceOf(InvalidLockNameError);
    await expect(a.acquireLease('', { maxLeases: 0 })).rejects.toBeInstanceOf(InvalidOptionError); // options first
  });

  it('close() fails lease waits with LockClientClosedError, and aborts then releases held leases', async () => {
    const [a, b] = await env.clients(2);
    const held = await a.acquireLease('close', { maxLeases: 1 });
    const other = await b.acquireLease('close-2', { maxLeases: 1 });
    const aWaits = failure(a.acquireLease('close-2', { maxLeases: 1 }));
    await env.queued('close-2', 2, b);
    const bWaits = b.acquireLease('close', { maxLeases: 1, timeoutMs: 10_000 });
    await env.queued('close', 2, b);
    await a.close();
    expect(await aWaits).toBeInstanceOf(LockClientClosedError);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect(held.released).toBe(true);
    const got = await bWaits;
    await expect(a.acquireLease('close', { maxLeases: 1 })).rejects.toBeInstanceOf(LockClientClosedError);
    await Promise.all([got.release(), other.release()]);
  });
});

/** The in-memory backend's test controls take leases away as ZooKeeper would. */
describe('InMemoryLockBackend test controls on leases', () => {
  it('loseLock(name) aborts the lease holders of that name first, then the next waiter gets the lease', async () => {
    const store = new InMemoryLockStore();
    const [a, b] = [new InMemoryLockBackend({ store }), new InMemoryLockBackend({ store })];
    const held = [await a.acquireLease('pool', { maxLeases: 2 }), await a.acquireLease('pool', { maxLeases: 2 })];
    const other = await a.acquireLease('elsewhere', { maxLeases: 1 });
    const waiting = b.acquireLease('pool', { maxLeases: 2 });
    const seen: string[] = [];
    held[0].signal.addEventListener('abort', async () =>
      seen.push(`aborted while ${(await b.leaseContenders('pool')).length} queued`),
    );
    a.loseLock('pool');
    const lease = await waiting;
    expect(held.map((h) => h.signal.reason)).toEqual([expect.any(LockLostError), expect.any(LockLostError)]);
    expect((held[0].signal.reason as Error).message).toContain('InMemoryLockBackend.loseLock("pool")');
    expect(other.isHeld()).toBe(true);
    expect(seen).toEqual(['aborted while 3 queued']);
    await Promise.all([lease.release(), other.release(), a.close(), b.close()]);
  });

  it('expireSession() loses every lease held, and lease waits queue again at the back, in the order they stood', async () => {
    const store = new InMemoryLockStore();
    const [a, b, c] = [
      new InMemoryLockBackend({ store, identity: 'a' }),
      new InMemoryLockBackend({ store, identity: 'b' }),
      new InMemoryLockBackend({ store, identity: 'c' }),
    ];
    const held = await a.acquireLease('pool', { maxLeases: 1 });
    const aWaits = [a.acquireLease('pool', { maxLeases: 1 }), a.acquireLease('pool', { maxLeases: 1 })];
    const cHolds = await c.acquireLease('other', { maxLeases: 1 });
    const bWaits = b.acquireLease('pool', { maxLeases: 1 });
    expect((await b.leaseContenders('pool')).map((x) => x.identity)).toEqual(['a', 'a', 'a', 'b']);
    a.expireSession();
    expect(held.signal.reason).toMatchObject({
      name: 'LockLostError',
      cause: expect.objectContaining({ name: 'ZkSessionLostError' }),
    });
    const bLease = await bWaits; // b stood behind a's waits, which queued again behind it
    expect((await b.leaseContenders('pool')).map((x) => [x.identity, x.holding])).toEqual([
      ['b', true],
      ['a', false],
      ['a', false],
    ]);
    expect(cHolds.isHeld()).toBe(true);
    await bLease.release();
    const first = await aWaits[0];
    await first.release();
    await (await aWaits[1]).release();
    await Promise.all([cHolds.release(), a.close(), b.close(), c.close()]);
  });
});
