import type { ReentrancyOption } from './reentrancy-option.js';
import type { MultiAcquireOptions, LockList, MultiLockHandle, LockBackend } from '../port/lock-backend.js';
import { describeList } from '../port/options.js';
import { ReentrantMultiLocker } from './reentrant-multi-locker.js';
import type { PendingWork } from '../util/pending-work.js';
import type { DeferredReleases } from './deferred-releases.js';
import type { LockCallPolicy } from './lock-call-policy.js';
import { resolveWithLockOptions, type WithLocksCallOptions } from './with-lock-options.js';

/**
 * Multi-locks through a `ReentrantLocker`: its default timeout, its call policy (events,
 * `ifLocked`, shutdown), its deferred releases (`holdAtLeastMs`) and its bodies tracked
 * for `drain`. Reentrancy itself is `ReentrantMultiLocker`'s.
 */
export class MultiRunner {
  private readonly multi: ReentrantMultiLocker;

  constructor(
    backend: LockBackend,
    private readonly defaultTimeoutMs: number,
    bodies: PendingWork,
    private readonly policy: LockCallPolicy,
    private readonly deferred: DeferredReleases,
  ) {
    this.multi = new ReentrantMultiLocker(backend, defaultTimeoutMs, bodies);
  }

  acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle> {
    return this.policy.acquiring(describeList(locks), this.multi.acquireAll(locks, options));
  }

  async withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options?: WithLocksCallOptions,
  ): Promise<T | undefined> {
    const { ifLocked, holdAtLeastMs, onLockLost, ...multi } = options ?? {};
    const { timeoutMs, signal, reentrant } = multi;
    const call = resolveWithLockOptions(
      { ifLocked, holdAtLeastMs, onLockLost, timeoutMs, signal, reentrant },
      this.defaultTimeoutMs,
    );
    const label = describeList(locks);
    const taken = await this.policy.granted(label, call, () =>
      this.multi.take(locks, { ...multi, timeoutMs: call.timeoutMs }),
    );
    if (!taken) return undefined;
    return this.multi.run(taken, fn, {
      ignoreLoss: call.onLockLost === 'ignore',
      holdAtLeastMs: call.holdAtLeastMs,
      defer: (group, delayMs) =>
        this.policy.closing ? void group.release().catch(() => undefined) : this.deferred.schedule(group, delayMs),
      onLost: this.policy.reportsLoss
        ? (error, grantedAt) => this.policy.lost(label, call, grantedAt, error)
        : undefined,
    });
  }
}
