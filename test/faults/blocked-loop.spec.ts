import {
  LockLostError,
  LockUnavailableError,
  ReentrantLocker,
  type LeaseHandle,
  type LockHandle,
  type MultiLockHandle,
  type ZkLockBackend,
} from '../../lib/index';
import type { InflightRequests } from '../../lib/core/zookeeper/session/inflight-requests';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { expireSession } from '../support/zookeeper/expire-session';

/** Blocks the event loop for `ms`: no timer, no socket read, runs meanwhile. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/**
 * A read sent now, answered while the loop is blocked: bytes from ZooKeeper wait in the
 * socket when the block ends, as they do in a busy application (heartbeats, replies,
 * notifications; an expired session's closed connection alone is seen only later, in the
 * close phase).
 */
const replyDuringBlock = (backend: ZkLockBackend): Promise<unknown> =>
  backend.client.session.exists('/').catch(() => undefined);

/**
 * The trust deadline is not only a timer: a holder whose event loop was blocked past it
 * (a long synchronous computation, a GC pause) sees its lock as lost on the first read of
 * the signal after it, before any timer runs, while the server has already handed the
 * lock on.
 */
describe('a holder whose event loop was blocked past its session', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('blocked-loop')));
  afterAll(() => fx.cleanup());

  it('reads signal.aborted === true at once, and isHeld() false, before any timer has run', async () => {
    // The holder's session is short; everything else in this (blocked) process keeps a
    // 4 s session, which outlives the block.
    const holder = await fx.backend({ sessionTimeoutMs: 1000 });
    const next = await fx.backend();
    const held = await holder.acquire('blocked');
    const waiting = next.acquire('blocked', { timeoutMs: 30_000 });
    await fx.queued('blocked', 2);
    expect(held.signal.aborted).toBe(false);

    blockFor(holder.client.session.timeoutMs + 800); // the server expires the holder's session meanwhile
    // Still in the same synchronous run: no timer has fired, no byte has been read.
    const abortedAtOnce = held.signal.aborted;
    expect(abortedAtOnce).toBe(true); // synchronous: still no timer has run
    const heldAtOnce = held.isHeld();
    let thrown: unknown;
    try {
      held.assertHeld();
    } catch (error) {
      thrown = error;
    }
    expect(heldAtOnce).toBe(false);
    expect(thrown).toBeInstanceOf(LockLostError);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);

    const lock = await waiting; // the other client got it: the holder was right to stop
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    await lock.release();
    await held.release(); // its session is gone: nothing to delete
  });
});

/**
 * Signals kept aside (`const s = lock.signal`, `AbortSignal.any([...])`) cannot check the
 * clock when read: they follow the handle's own AbortController, which aborts in the first
 * callback the library runs after the block.
 */
describe('signals kept aside after the event loop was blocked past the session', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('blocked-stored')));
  afterAll(() => fx.cleanup());

  /** A lock, a lease and a multi-lock on one short session, and their signals as code keeps them. */
  const holdAll = async () => {
    const backend = await fx.backend({ sessionTimeoutMs: 1000 });
    const lock = await backend.acquire('stored-lock');
    const lease = await backend.acquireLease('stored-lease', { maxLeases: 2 });
    const group = await backend.acquireAll(['stored-a', 'stored-b']);
    const signals = {
      lock: lock.signal,
      lockOrRevoked: AbortSignal.any([lock.signal, lock.revocation]),
      lease: lease.signal,
      group: group.signal,
      groupCombined: AbortSignal.any([group.signal, new AbortController().signal]),
    };
    const aborted = () => Object.fromEntries(Object.entries(signals).map(([key, signal]) => [key, signal.aborted]));
    const releaseAll = () => Promise.all([lock.release(), lease.release(), group.release()]);
    return { backend, signals, aborted, releaseAll };
  };
  const none = { lock: false, lockOrRevoked: false, lease: false, group: false, groupCombined: false };
  const all = { lock: true, lockOrRevoked: true, lease: true, group: true, groupCombined: true };

  it('abort in the same pass of the event loop when ZooKeeper sent bytes meanwhile: before an immediate queued after the block', async () => {
    const { backend, signals, aborted, releaseAll } = await holdAll();
    let reply: Promise<unknown> | undefined;
    // Blocked inside a timer callback: the poll phase (ZooKeeper's bytes) comes next, then
    // the check phase (immediates); the next timers phase only after both.
    const [during, after] = await new Promise<Array<ReturnType<typeof aborted>>>((resolve) =>
      setTimeout(() => {
        reply = replyDuringBlock(backend);
        blockFor(backend.client.session.timeoutMs + 800);
        const during = aborted(); // nothing could tell them yet: only a read through a handle checks the clock
        setImmediate(() => resolve([during, aborted()]));
      }, 0),
    );
    expect(during).toEqual(none);
    expect(after).toEqual(all);
    expect(signals.lock.reason).toBeInstanceOf(LockLostError);
    expect(signals.group.reason).toBeInstanceOf(LockLostError);
    expect(signals.lease.reason).toBeInstanceOf(LockLostError);
    await reply;
    await releaseAll();
  });

  it('abort at the latest in the next timers phase: before a timer set after the block', async () => {
    const { backend, aborted, releaseAll } = await holdAll();
    // Blocked in the check phase, with nothing from ZooKeeper: the timers phase is the
    // first place where the library runs again.
    const [during, after] = await new Promise<Array<ReturnType<typeof aborted>>>((resolve) =>
      setImmediate(() => {
        blockFor(backend.client.session.timeoutMs + 800);
        const during = aborted();
        setTimeout(() => resolve([during, aborted()]), 0);
      }),
    );
    expect(during).toEqual(none);
    expect(after).toEqual(all);
    await releaseAll();
  });
});

/**
 * A grant that comes back to an event loop blocked past the session's trust deadline would
 * be born lost: the call waits for the session to prove itself again (a barrier write,
 * then the proof), and only then grants, so the body runs under a trusted grant. (A grant
 * lost before its body starts all the same is refused: `lib/core/reentrancy/lost-grant.spec.ts`.)
 */
describe('a grant that comes while the event loop is blocked past the trust deadline', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('blocked-grant')));
  afterAll(() => fx.cleanup());

  /**
   * Runs `start` in a timer callback and blocks there past the client's trust deadline
   * (0.8 of the session timeout after its last proof, sent before the block) but short of
   * the server's expiry (a full timeout after it last heard from the client, a heartbeat
   * before the block at most): the session lives on, so the grant does come. After a
   * block in the timers phase the poll phase comes first, with the replies that came
   * meanwhile: before a tick could take them for a silent server's and reconnect (a
   * re-attach proves the session at once; then the grant would be good).
   */
  const blockPastTrust = (backend: ZkLockBackend, start: () => Promise<unknown>) =>
    new Promise<{ call: Promise<unknown> }>((resolve) =>
      setTimeout(() => {
        const call = start();
        blockFor(0.82 * backend.client.session.timeoutMs);
        resolve({ call });
      }, 0),
    );

  /** The body ran once, under a trusted grant (its signal not aborted as it started). */
  const trustedOnce = (outcome: unknown, entered: boolean[]): void =>
    expect([outcome, entered]).toEqual(['resolved', [false]]);
  const outcomeOf = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => 'resolved',
      (error: unknown) => error,
    );

  it('withLock: a waiter whose turn comes during the block waits for the proof and runs the body under a trusted grant', async () => {
    const holder = await fx.backend();
    const waiter = await fx.backend();
    const locker = new ReentrantLocker(waiter, 30_000);
    const held = await holder.acquire('turn');
    const entered: boolean[] = [];
    const call = locker.withLock('turn', (lock) => void entered.push(lock.signal.aborted), { timeoutMs: 30_000 });
    await fx.queued('turn', 2);
    let released: Promise<void> | undefined;
    // The holder's delete leaves now: the waiter's turn comes during the block.
    await blockPastTrust(waiter, async () => (released = held.release()));
    trustedOnce(await outcomeOf(call), entered);
    await released;
    expect((await fx.nodes('turn')) ?? []).toEqual([]); // released after the body
  });

  it.each([
    [
      "withLock, ifLocked 'skip'",
      (l: ReentrantLocker, body: (h: LockHandle) => void) => l.withLock('skip', body, { ifLocked: 'skip' }),
    ],
    [
      "withLock, ifLocked 'throw'",
      (l: ReentrantLocker, body: (h: LockHandle) => void) => l.withLock('throw', body, { ifLocked: 'throw' }),
    ],
    ['withLocks', (l: ReentrantLocker, body: (h: MultiLockHandle) => void) => l.withLocks(['many-a', 'many-b'], body)],
    ['withLease', (l: ReentrantLocker, body: (h: LeaseHandle) => void) => l.withLease('lease', body, { maxLeases: 1 })],
  ] as const)(
    '%s: the grant waits for the proof; the body runs under a trusted grant, and nothing is left',
    async (_, start) => {
      const backend = await fx.backend();
      // Between lock loops, as an application's session is: one loop, then idle. (A session
      // blocked right after its connect has nothing but the connect to prove it, and is given
      // up a timeout after it, before a proof can come: a try then answers unavailable.)
      await (await backend.acquire('warm-up')).release();
      await fx.releasesConfirmed();
      backend.client.session.checkTrust(); // nothing held: idle from now on
      const locker = new ReentrantLocker(backend, 30_000);
      const entered: boolean[] = [];
      const { call } = await blockPastTrust(backend, () =>
        start(locker, (handle: { signal: AbortSignal }) => void entered.push(handle.signal.aborted)),
      );
      trustedOnce(await outcomeOf(call), entered);
      expect(await fx.tree()).toEqual([]); // no lock or lease node left
    },
  );
});

/**
 * A process that blocked its event loop between lock loops (a synchronous child process, a
 * long computation) for most of the session timeout starts a new call on a session that
 * ZooKeeper still keeps, but whose proof (`SessionLiveness`) is too old to trust a grant.
 * The call waits, within its own timeout, for the session to prove itself again (a barrier
 * write, then the proof), and is granted only then: never a grant born lost.
 */
describe('a fresh call after the event loop was blocked for most of the session timeout', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('blocked-fresh')));
  afterAll(() => fx.cleanup());

  /** What a grant's body sees: trusted now, and still after a round trip to ZooKeeper. */
  interface Seen {
    aborted: boolean;
    held: boolean;
    abortedLater: boolean;
    provenAfterBlock: boolean;
    sessionId: string;
    /** The lock or lease nodes the handle owns exist, as the inspector reads ZooKeeper's state. */
    nodes: boolean[];
  }
  type Handle = { signal: AbortSignal; isHeld(): boolean; release(): Promise<void> };
  /** Each call, with the node paths its handle owns. */
  const calls: Array<[string, (backend: ZkLockBackend) => Promise<{ handle: Handle; paths: string[] }>]> = [
    [
      'acquire',
      async (backend) => {
        const lock = await backend.acquire('fresh-acquire', { timeoutMs: 10_000 });
        return { handle: lock, paths: [lock.path] };
      },
    ],
    [
      'acquireLease',
      async (backend) => {
        const lease = await backend.acquireLease('fresh-lease', { maxLeases: 2, timeoutMs: 10_000 });
        return { handle: lease, paths: [lease.path] };
      },
    ],
    [
      'acquireAll',
      async (backend) => {
        const group = await backend.acquireAll(['fresh-a', 'fresh-b'], { timeoutMs: 10_000 });
        return { handle: group, paths: group.handles.map((lock) => (lock as LockHandle & { path: string }).path) };
      },
    ],
  ];

  /** The node at `path` exists, as ZooKeeper's own state says. */
  const exists = (path: string): Promise<boolean> => fx.inspector.exists(path);

  /**
   * Resolves, in a synchronous run of its own, once the session has no request in flight
   * (an idle session's usual state between its heartbeat reads): then no answer waits in
   * the socket across the block, which would make the session leave its server as silent
   * and re-attach (a re-attach proves the session at once).
   */
  const quiet = async (backend: ZkLockBackend): Promise<void> => {
    const { inflight } = backend.client.session as unknown as { inflight: InflightRequests };
    while (inflight.oldest(false) !== undefined) await new Promise((resolve) => setImmediate(resolve));
  };

  /** A lock loop first (heartbeat writes going), then a block of `0.9 T`, then `start` at once. */
  const afterBlock = async <T>(
    backend: ZkLockBackend,
    start: (blockedAt: number) => Promise<T>,
    timeouts = 0.9,
  ): Promise<{ blockedAt: number; result: T }> => {
    for (let i = 0; i < 3; i++) await (await backend.acquire('warm-up')).release();
    await quiet(backend);
    const blockedAt = performance.now();
    blockFor(timeouts * backend.client.session.timeoutMs);
    return { blockedAt, result: await start(blockedAt) };
  };

  const seen = async (backend: ZkLockBackend, handle: Handle, paths: string[], blockedAt: number): Promise<Seen> => {
    const aborted = handle.signal.aborted;
    const held = handle.isHeld();
    const provenAfterBlock = backend.client.session.provenAt > blockedAt;
    const nodes = await Promise.all(paths.map(exists));
    return {
      aborted,
      held,
      abortedLater: handle.signal.aborted,
      provenAfterBlock,
      sessionId: backend.client.session.id,
      nodes,
    };
  };
  const trusted = (sessionId: string, count: number): Seen => ({
    aborted: false,
    held: true,
    abortedLater: false,
    provenAfterBlock: true,
    sessionId,
    nodes: Array.from({ length: count }, () => true),
  });

  it.each(calls)('%s: waits for the session to prove itself, then grants a trusted handle', async (_, call) => {
    const backend = await fx.backend();
    const sessionId = backend.client.session.id;
    const { blockedAt, result } = await afterBlock(backend, () => call(backend));
    const { handle, paths } = result;
    expect(await seen(backend, handle, paths, blockedAt)).toEqual(trusted(sessionId, paths.length));
    await handle.release();
    expect(await fx.tree()).toEqual([]);
  });

  it('withLock: the body runs under a trusted handle, in the same session', async () => {
    const backend = await fx.backend();
    const sessionId = backend.client.session.id;
    const locker = new ReentrantLocker(backend, 10_000);
    const { result } = await afterBlock(backend, (blockedAt) =>
      locker.withLock('fresh-with', (lock) =>
        seen(backend, lock, [(lock as LockHandle & { path: string }).path], blockedAt),
      ),
    );
    expect(result).toEqual(trusted(sessionId, 1));
    expect(await fx.tree()).toEqual([]);
  });
  it('the session ended meanwhile (expired by ZooKeeper, which cannot be reached): the call fails with LockUnavailableError within its timeout', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const backend = await fx.backend({ connectionString: proxy.connectionString });
      await (await backend.acquire('warm-up')).release();
      await fx.releasesConfirmed();
      const credentials = backend.client.session.credentials();
      await proxy.stop(); // ZooKeeper out of reach from here on
      await expireSession(zkConnect(), credentials, undefined, { blockEventLoop: false });
      const timeoutMs = 2000;
      blockFor(0.9 * backend.client.session.timeoutMs);
      const startedAt = performance.now();
      const error = await backend.acquire('fresh-ended', { timeoutMs }).catch((e: unknown) => e);
      const tookMs = performance.now() - startedAt;
      expect(error).toBeInstanceOf(LockUnavailableError);
      expect(tookMs).toBeGreaterThanOrEqual(timeoutMs - 1); // its own deadline, not sooner
      expect(tookMs).toBeLessThan(timeoutMs + backend.client.session.timeoutMs / 2); // and not long after it
      expect(await fx.inspector.children(backend.pathOf('fresh-ended'))).toBeNull(); // nothing reached ZooKeeper
    } finally {
      await proxy.stop();
    }
  });

  it('blocked past the session timeout (ZooKeeper expired the session): the call is granted in a new session, trusted', async () => {
    const backend = await fx.backend();
    const { id } = backend.client.session;
    const { result } = await afterBlock(
      backend,
      (blockedAt) => backend.acquire('fresh-new', { timeoutMs: 10_000 }).then((lock) => ({ lock, blockedAt })),
      1.3,
    );
    const { lock } = result;
    expect([lock.signal.aborted, lock.isHeld(), await fx.inspector.exists(lock.path)]).toEqual([false, true, true]);
    expect(backend.client.session.id).not.toBe(id);
    await lock.release();
    expect(await fx.tree()).toEqual([]);
  });
});
