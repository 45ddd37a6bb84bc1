import { LockOrderError } from '../errors/errors.js';
import { LockGroupHandle } from '../multi/lock-group-handle.js';
import { lockOrderConflict, planLocks, type PlannedLock } from '../multi/multi-lock-plan.js';
import type { LockBackend, LockHandle, LockList, MultiAcquireOptions, MultiLockHandle } from '../port/lock-backend.js';
import { describeList, resolveMultiAcquireOptions } from '../port/options.js';
import type { PendingWork } from '../util/pending-work.js';
import {
  resolveReentrant,
  resolveWithLockOptions,
  type ReentrancyOption,
  type ResolvedWithLockOptions,
  type WithLocksCallOptions,
} from './call-options.js';
import { ChainHold } from './chain-hold.js';
import type { DeferredReleases } from './deferred-releases.js';
import type { LockCallPolicy } from './lock-call-policy.js';
import { heldInScope, lockScopeStorage, namesHeldInScope, scopeKeyOf } from './lock-scope.js';
import { refuseLost, watchLoss } from './loss-watch.js';

/** A multi-lock as a call chain holds it: the handle, and the grants of its own (not joined). */
interface ChainGroup {
  readonly group: LockGroupHandle;
  readonly grants: readonly LockHandle[];
}

/**
 * `ReentrantLocker`'s `acquireAll` and `withLocks`, with its default timeout, its call
 * policy (events, `ifLocked`, shutdown), its deferred releases (`holdAtLeastMs`) and its
 * bodies tracked for `drain`. Names the call chain already holds are joined (no node, no
 * wait; read held and write asked fails at once with `LockUpgradeError`), the others are
 * taken together through the backend's `acquireAll`. The chain's locks stay held while it
 * waits for the others, so it may wait only for names that sort after every lock it holds,
 * listed or not: otherwise `LockOrderError` at once, before anything is sent (see
 * `lockOrderConflict`).
 */
export class ReentrantMultiLocker {
  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeout: () => number,
    private readonly bodies: PendingWork,
    private readonly policy: LockCallPolicy,
    private readonly deferred: DeferredReleases,
  ) {}

  async acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle> {
    return (await this.policy.acquiring(describeList(locks), this.take(locks, options))).group;
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
      this.defaultTimeout(),
    );
    const label = describeList(locks);
    const taken = await this.policy.granted(label, call, () =>
      this.take(locks, { ...multi, timeoutMs: call.timeoutMs }),
    );
    if (!taken) return undefined;
    return this.run(label, call, taken, fn);
  }

  /**
   * Runs `fn` holding a group from `take`, and ends it as `call` says. A group with a lock
   * already lost is released and rejects with the loss: `fn` never starts under it.
   */
  private async run<T>(
    label: string,
    call: ResolvedWithLockOptions,
    { group, grants }: ChainGroup,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
  ): Promise<T> {
    if (!group.isHeld()) return refuseLost(group);
    const grantedAt = performance.now();
    const stopWatching = this.policy.reportsLoss
      ? watchLoss(group, (error) => this.policy.lost(label, call, grantedAt, error))
      : undefined;
    const holds = grants.map((grant) => new ChainHold(grant));
    const body = this.runHolding(holds, async () => fn(group));
    void this.bodies.track(body.catch(() => undefined));
    try {
      const result = await body;
      // Lost while the body ran: its work was not done under the locks.
      if (!(call.onLockLost === 'ignore' && group.signal.aborted)) group.assertHeld();
      return result;
    } finally {
      stopWatching?.();
      // The grants go once every nested hold the body started is released, as in withLock.
      await Promise.all(holds.map((hold) => hold.settle()));
      const delayMs = grantedAt + call.holdAtLeastMs - performance.now();
      if (delayMs > 0 && group.isHeld() && !this.policy.closing) this.deferred.schedule(group, delayMs);
      else await group.release().catch(() => undefined); // a failed release loses to the body's outcome
    }
  }

  /** The group, with the names this chain holds joined and the others taken together. */
  private async take(
    locks: LockList,
    options: (MultiAcquireOptions & ReentrancyOption) | undefined,
  ): Promise<ChainGroup> {
    const resolved = resolveMultiAcquireOptions(options, this.defaultTimeout());
    const plan = planLocks(locks);
    const reentrant = resolveReentrant(options);
    // Every joined name, and the order, is checked before any is entered: a refusal leaves nothing to undo.
    const outers = plan.map(({ name, mode }) => heldInScope(scopeKeyOf(this.backend, name))?.joinable(mode, reentrant));
    const fresh = plan.filter((_, i) => !outers[i]);
    const conflict = lockOrderConflict(namesHeldInScope(this.backend), fresh);
    if (conflict) throw new LockOrderError(conflict.held, conflict.missing);
    const joined = plan.map(({ mode }, i) => outers[i]?.enter(mode));
    let taken: MultiLockHandle | undefined;
    try {
      if (fresh.length > 0) {
        this.policy.refuseIfClosing(describeList(toList(fresh)));
        taken = await this.backend.acquireAll(toList(fresh), resolved);
      }
    } catch (error) {
      for (const hold of joined) hold?.end();
      throw error;
    }
    const grants = taken?.handles ?? [];
    const byName = new Map(grants.map((grant) => [grant.name, grant]));
    const handles = plan.map(({ name }, i) => joined[i] ?? byName.get(name)!);
    // The joined holds end; the new locks go as the backend's group, their maxHoldMs clock with them.
    const releaseAll = (): Promise<Array<PromiseSettledResult<void>>> =>
      Promise.allSettled([...joined.map((hold) => hold?.release()), taken?.release()]);
    return { group: new LockGroupHandle(handles, { releaseAll }), grants };
  }

  /** Runs `fn` in a scope where the chain holds every grant of `holds` (one scope, entered with `run()`). */
  private runHolding<T>(holds: readonly ChainHold[], fn: () => Promise<T>): Promise<T> {
    const scope = new Map(lockScopeStorage.getStore());
    for (const hold of holds) scope.set(scopeKeyOf(this.backend, hold.handle.name), hold);
    return lockScopeStorage.run(scope, fn);
  }
}

/** A plan's locks as a list for `acquireAll`. */
function toList(plan: readonly PlannedLock[]): LockList {
  return plan.map(({ name, mode }) => ({ name, mode }));
}
