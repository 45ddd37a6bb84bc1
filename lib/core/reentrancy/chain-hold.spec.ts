import { setTimeout as sleep } from 'node:timers/promises';

import { LockLostError } from '../errors/errors.js';
import { InMemoryLockBackend } from '../memory/in-memory-lock-backend.js';
import { InMemoryLockStore } from '../memory/in-memory-lock-store.js';
import { ReentrantLocker } from './reentrant-locker.js';

// The hold count of one call chain's grant (`ChainHold`), through `ReentrantLocker` over
// the in-memory backend: another client of the same store stands for a second process.

/** A promise and its resolve, to let a body end when the test says so. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Long enough for every microtask and immediate of an in-memory release to have run. */
const settle = (): Promise<unknown> => sleep(20);

describe('ChainHold: a grant goes with the last hold of its chain', () => {
  let store: InMemoryLockStore;
  let mine: InMemoryLockBackend;
  let other: InMemoryLockBackend;
  let locker: ReentrantLocker;
  beforeEach(() => {
    store = new InMemoryLockStore();
    mine = new InMemoryLockBackend({ store });
    other = new InMemoryLockBackend({ store });
    locker = new ReentrantLocker(mine, 5000);
  });
  afterEach(async () => {
    await locker.drain(0);
    await Promise.all([mine.close(), other.close()]);
  });

  it('two detached nested holds: the lock stays until the last one ends, not the first', async () => {
    const [short, long] = [gate(), gate()];
    const ended: string[] = [];
    let nested: Promise<unknown>[] = [];
    // The holder's call resolves only when its last hold ends: not awaited here.
    const outer = locker.withLock('jobs', () => {
      // Started, not awaited: they run after the holder returns.
      nested = [
        locker.withLock('jobs', () => short.promise).then(() => ended.push('short')),
        locker.withLock('jobs', () => long.promise).then(() => ended.push('long')),
      ];
    });
    await settle(); // the holder returned; both nested holds run
    expect(nested).toHaveLength(2);
    short.open();
    await nested[0];
    await settle();
    expect(ended).toEqual(['short']);
    expect(await other.tryAcquire('jobs')).toBeNull(); // the long one still runs under the lock
    long.open();
    await Promise.all([nested[1], outer]);
    const next = await other.tryAcquire('jobs');
    expect(next).not.toBeNull();
    await next!.release();
  });

  it('work the holder started runs after a grant kept only by holdAtLeastMs: it takes the lock for itself', async () => {
    const later = gate();
    let late: Promise<void> | undefined;
    let outerToken = -1n;
    const seen: { token: bigint; otherGot: boolean }[] = [];
    await locker.withLock(
      'tick',
      (handle) => {
        outerToken = handle.fencingToken;
        // Runs in the holder's async context, but after it returned: nothing holds the grant
        // any more but the holdAtLeastMs timer, which releases it whatever runs then.
        late = later.promise.then(() =>
          locker.withLock('tick', async (own) => {
            const got = await other.tryAcquire('tick');
            await got?.release();
            seen.push({ token: own.fencingToken, otherGot: got !== null });
          }),
        );
      },
      { holdAtLeastMs: 100 },
    );
    later.open();
    await late;
    expect(seen).toHaveLength(1);
    expect(seen[0].otherGot).toBe(false);
    expect(seen[0].token).toBeGreaterThan(outerToken); // its own grant, not the kept one re-entered
  });

  it('a nested withLock whose lock was lost while it ran rejects with the loss, even though its body returned', async () => {
    let nested: unknown;
    const outer = locker.withLock('lost', async () => {
      nested = await locker
        .withLock('lost', () => {
          mine.loseLock('lost');
          return 'done without the lock';
        })
        .catch((error: unknown) => error);
    });
    await expect(outer).rejects.toBeInstanceOf(LockLostError);
    expect(nested).toBeInstanceOf(LockLostError);
  });
  it('a lock lost before a nested call is not re-entered: withLock, acquire and withLocks reject with the loss, no body starts', async () => {
    const nested: unknown[] = [];
    let ran = false;
    const outer = locker.withLock('gone', async () => {
      mine.loseLock('gone');
      nested.push(await locker.withLock('gone', () => void (ran = true)).catch((error: unknown) => error));
      const entered = locker.acquire('gone', { mode: 'read' }).then(async (hold) => void (await hold.release()));
      nested.push(await entered.catch((error: unknown) => error));
      nested.push(await locker.withLocks(['gone', 'later'], () => void (ran = true)).catch((error: unknown) => error));
    });
    await expect(outer).rejects.toBeInstanceOf(LockLostError);
    expect(ran).toBe(false);
    expect(nested).toEqual([expect.any(LockLostError), expect.any(LockLostError), expect.any(LockLostError)]);
    expect(await mine.locks()).toEqual([]); // nothing was queued for the nested calls
  });
});
