import type { MultiAcquireOptions, LockList, AcquireLeaseOptions, AcquireOptions } from '../port/lock-backend.js';
import { LockLostError } from '../errors/errors.js';
import { InMemoryLockBackend } from '../memory/in-memory-lock-backend.js';
import { ReentrantLocker } from './reentrant-locker.js';

/**
 * Grants that come back lost, as a ZooKeeper grant does to an event loop blocked past the
 * session's trust deadline (test/faults/blocked-loop.spec.ts makes that happen for real).
 */
class LostOnGrant extends InMemoryLockBackend {
  override async acquire(name: string, options?: AcquireOptions) {
    const handle = await super.acquire(name, options);
    this.loseLock(name);
    return handle;
  }

  override async acquireAll(locks: LockList, options?: MultiAcquireOptions) {
    const group = await super.acquireAll(locks, options);
    this.loseLock(group.names[0]);
    return group;
  }

  override async acquireLease(name: string, options: AcquireLeaseOptions) {
    const lease = await super.acquireLease(name, options);
    this.loseLock(name);
    return lease;
  }
}

describe('a grant lost before the body starts', () => {
  const backend = new LostOnGrant();
  const locker = new ReentrantLocker(backend, 1000);
  afterAll(() => backend.close());

  it.each([
    ["withLock, ifLocked 'wait'", (body: () => void) => locker.withLock('a', body)],
    ["withLock, ifLocked 'skip'", (body: () => void) => locker.withLock('b', body, { ifLocked: 'skip' })],
    ["withLock, ifLocked 'throw'", (body: () => void) => locker.withLock('c', body, { ifLocked: 'throw' })],
    ["withLock, onLockLost 'ignore'", (body: () => void) => locker.withLock('d', body, { onLockLost: 'ignore' })],
    ['withLocks', (body: () => void) => locker.withLocks(['e', 'f'], body)],
    ['withLease', (body: () => void) => locker.withLease('g', body, { maxLeases: 1 })],
  ])(
    '%s: the body never starts; the grant is released and the call rejects with its LockLostError',
    async (_, call) => {
      let ran = false;
      await expect(call(() => void (ran = true))).rejects.toBeInstanceOf(LockLostError);
      expect(ran).toBe(false);
      expect(await backend.locks()).toEqual([]);
      expect(await backend.leaseContenders('g')).toEqual([]);
    },
  );
});
