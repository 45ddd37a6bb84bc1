import {
  LockLostError,
  ReentrantLocker,
  type LeaseHandle,
  type LockHandle,
  type MultiLockHandle,
  type ZkLockBackend,
} from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

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
 * A grant that comes back to an event loop blocked past the session's trust deadline is
 * lost before the body starts: `withLock` releases it and rejects with its
 * `LockLostError`; the body never starts (`withLocks` and `withLease` alike:
 * `lib/core/context/lost-grant.spec.ts`).
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

  /**
   * The body never started under a lost grant: the call rejected with the loss. `tolerant`:
   * or the call took the lock again and ran the body with a good grant (the multi-lock
   * acquisition takes its locks again while the deadline leaves time; a lease's several
   * round trips may outlast a reconnect, which proves the session at once).
   */
  const neverUnderLost = (outcome: unknown, entered: boolean[], tolerant = false): void => {
    if (tolerant && outcome === 'resolved') expect(entered).toEqual([false]);
    else expect([outcome, entered]).toEqual([expect.any(LockLostError), []]);
  };
  const outcomeOf = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => 'resolved',
      (error: unknown) => error,
    );

  it('withLock: a waiter whose turn comes during the block never runs the body under the lost grant; its node goes', async () => {
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
    neverUnderLost(await outcomeOf(call), entered);
    await released;
    expect((await fx.nodes('turn')) ?? []).toEqual([]); // the lost grant's node went before the call rejected
  });

  it.each([
    [
      "withLock, ifLocked 'skip'",
      (l: ReentrantLocker, body: (h: LockHandle) => void) => l.withLock('skip', body, { ifLocked: 'skip' }),
      false,
    ],
    [
      "withLock, ifLocked 'throw'",
      (l: ReentrantLocker, body: (h: LockHandle) => void) => l.withLock('throw', body, { ifLocked: 'throw' }),
      false,
    ],
    [
      'withLocks',
      (l: ReentrantLocker, body: (h: MultiLockHandle) => void) => l.withLocks(['many-a', 'many-b'], body),
      true,
    ],
    [
      'withLease',
      (l: ReentrantLocker, body: (h: LeaseHandle) => void) => l.withLease('lease', body, { maxLeases: 1 }),
      true,
    ],
  ] as const)(
    '%s: a grant lost before the body starts is released and the call rejects',
    async (_, start, tolerant) => {
      const backend = await fx.backend();
      const locker = new ReentrantLocker(backend, 30_000);
      const entered: boolean[] = [];
      const { call } = await blockPastTrust(backend, () =>
        start(locker, (handle: { signal: AbortSignal }) => void entered.push(handle.signal.aborted)),
      );
      neverUnderLost(await outcomeOf(call), entered, tolerant);
      expect(await fx.tree()).toEqual([]); // no lock or lease node left
    },
  );
});
