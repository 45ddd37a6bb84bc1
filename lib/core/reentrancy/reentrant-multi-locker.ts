import { type ReentrancyOption, resolveReentrant } from './reentrancy-option.js';
import type {
  MultiAcquireOptions,
  LockList,
  LockBackend,
  LockHandle,
  LockMode,
  MultiLockHandle,
} from '../port/lock-backend.js';
import { type LockLostError, LockOrderError, LockReentryError, LockUpgradeError } from '../errors/errors.js';
import { refuseLost, watchLoss } from './loss-watch.js';
import { ChainHold } from './chain-hold.js';
import { heldInScope, lockScopeStorage, namesHeldInScope, scopeKeyOf } from './lock-scope.js';
import type { PendingWork } from '../util/pending-work.js';
import { LockGroupHandle } from '../multi/lock-group-handle.js';
import { resolveMultiAcquireOptions, type ResolvedMultiAcquireOptions } from '../port/options.js';
import { lockOrderConflict, planLocks, type PlannedLock } from '../multi/multi-lock-plan.js';

/** A multi-lock as a call chain holds it: the handle, and the grants of its own (not joined). */
export interface ChainGroup {
  readonly group: LockGroupHandle;
  readonly grants: readonly LockHandle[];
}

/** How `withLocks` ends, decided by `MultiRunner` from the call's options. */
export interface GroupSettlement {
  /** `onLockLost: 'ignore'`: return the body's result even if a lock was lost. */
  readonly ignoreLoss: boolean;
  /** Keep the locks until this long after the grant (`holdAtLeastMs`), through `defer`. */
  readonly holdAtLeastMs: number;
  readonly defer: (group: MultiLockHandle, delayMs: number) => void;
  /** Told once if a lock is lost while the body runs. */
  readonly onLost?: (error: LockLostError, grantedAt: number) => void;
}

/**
 * `ReentrantLocker`'s `acquireAll` and `withLocks`: names the call chain already holds are
 * joined (no node, no wait; read held and write asked fails at once with
 * `LockUpgradeError`), the others are taken together through the backend's `acquireAll`.
 * The chain's locks stay held while it waits for the others, so it may wait only for names
 * that sort after every lock it holds, listed or not: otherwise `LockOrderError` at once,
 * before anything is sent (see `lockOrderConflict`).
 */
export class ReentrantMultiLocker {
  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeoutMs: number,
    private readonly bodies: PendingWork,
  ) {}

  async acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle> {
    return (await this.take(locks, options)).group;
  }

  /**
   * Runs `fn` holding a group from `take`, and ends it as `settlement` says. A group with a
   * lock already lost is released and rejects with the loss: `fn` never starts under it.
   */
  async run<T>(
    { group, grants }: ChainGroup,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    settlement: GroupSettlement,
  ): Promise<T> {
    if (!group.isHeld()) return refuseLost(group);
    const grantedAt = performance.now();
    const stopWatching = settlement.onLost && watchLoss(group, (error) => settlement.onLost!(error, grantedAt));
    const holds = grants.map((grant) => new ChainHold(grant));
    const body = this.runHolding(holds, async () => fn(group));
    void this.bodies.track(body.catch(() => undefined));
    try {
      const result = await body;
      // Lost while the body ran: its work was not done under the locks.
      if (!(settlement.ignoreLoss && group.signal.aborted)) group.assertHeld();
      return result;
    } finally {
      stopWatching?.();
      // The grants go once every nested hold the body started is released, as in withLock.
      await Promise.all(holds.map((hold) => hold.settle()));
      const delayMs = grantedAt + settlement.holdAtLeastMs - performance.now();
      if (delayMs > 0 && group.isHeld()) settlement.defer(group, delayMs);
      else await group.release().catch(() => undefined); // a failed release loses to the body's outcome
    }
  }

  /** The group, with the names this chain holds joined and the others taken together. */
  async take(locks: LockList, options: (MultiAcquireOptions & ReentrancyOption) | undefined): Promise<ChainGroup> {
    const resolved = resolveMultiAcquireOptions(options, this.defaultTimeoutMs);
    const plan = planLocks(locks);
    const reentrant = resolveReentrant(options);
    // Every joined name, and the order, is checked before any is entered: a refusal leaves nothing to undo.
    const outers = plan.map(({ name, mode }) =>
      joinable(heldInScope(scopeKeyOf(this.backend, name)), name, mode, reentrant),
    );
    const fresh = plan.filter((_, i) => !outers[i]);
    const conflict = lockOrderConflict(namesHeldInScope(this.backend), fresh);
    if (conflict) throw new LockOrderError(conflict.held, conflict.missing);
    const joined = plan.map(({ mode }, i) => outers[i]?.enter(mode));
    let grants: readonly LockHandle[] = [];
    try {
      if (fresh.length > 0) grants = await this.acquireFresh(fresh, resolved);
    } catch (error) {
      for (const hold of joined) hold?.end();
      throw error;
    }
    const byName = new Map(grants.map((grant) => [grant.name, grant]));
    return { group: new LockGroupHandle(plan.map(({ name }, i) => joined[i] ?? byName.get(name)!)), grants };
  }

  private async acquireFresh(
    fresh: readonly PlannedLock[],
    options: ResolvedMultiAcquireOptions,
  ): Promise<readonly LockHandle[]> {
    const locks = fresh.map(({ name, mode }) => ({ name, mode }));
    return (await this.backend.acquireAll(locks, options)).handles;
  }

  /** Runs `fn` in a scope where the chain holds every grant of `holds` (one scope, entered with `run()`). */
  private runHolding<T>(holds: readonly ChainHold[], fn: () => Promise<T>): Promise<T> {
    const scope = new Map(lockScopeStorage.getStore());
    for (const hold of holds) scope.set(scopeKeyOf(this.backend, hold.handle.name), hold);
    return lockScopeStorage.run(scope, fn);
  }
}

/** The chain's hold of `name` if it may be joined in `mode`; throws where joining must fail. */
function joinable(
  outer: ChainHold | undefined,
  name: string,
  mode: LockMode,
  reentrant: boolean,
): ChainHold | undefined {
  if (!outer) return undefined;
  if (!reentrant) throw new LockReentryError(name);
  const { signal } = outer.handle;
  if (signal.aborted) throw signal.reason; // a lost lock is not re-entered
  if (outer.handle.mode === 'read' && mode === 'write') throw new LockUpgradeError(name);
  return outer;
}
