import {
  canExpireHold,
  type MultiAcquireOptions,
  type LockList,
  type LockBackend,
  type MultiLockHandle,
  type LockHandle,
} from '../port/lock-backend.js';
import { LockGroupHandle, type LockGroupRequests } from './lock-group-handle.js';
import { resolveMultiAcquireOptions, type ResolvedMultiAcquireOptions } from '../port/options.js';
import { planLocks, type PlannedLock } from './multi-lock-plan.js';
import { nodeFormatFor } from '../port/node-format.js';
import { InvalidOptionError, LockAbortedError, LockTimeoutError, LockUnavailableError } from '../errors/errors.js';
import { multiLockMessages } from '../errors/messages.js';
import { longTimeout } from '../util/long-timeout.js';

/**
 * Takes every lock of `locks` through `backend`, all or nothing, and never deadlocks
 * whatever order callers list the names in: see `MultiLockAcquisition`. Resolves with a
 * `MultiLockHandle`, or rejects with `LockTimeoutError` / `LockAbortedError` (naming the
 * lock it was waiting for) or the backend's error, holding nothing. Checks the options,
 * then the list (`InvalidOptionError`, `InvalidLockListError`, `InvalidLockNameError`),
 * before anything is sent. `timeoutMs` defaults to `Infinity`. A backend that can send
 * several locks' requests together passes `together` (`ZkLockGroupRequests`).
 *
 * ```ts
 * const locks = await acquireAll(backend, ['stock/7', { name: 'orders/42', mode: 'read' }], { timeoutMs: 5_000 });
 * try { await work(locks.signal); } finally { await locks.release(); }
 * ```
 */
export async function acquireAll(
  backend: LockBackend,
  locks: LockList,
  options?: MultiAcquireOptions,
  together?: LockGroupRequests,
): Promise<MultiLockHandle> {
  const resolved = resolveMultiAcquireOptions(options, Infinity);
  const plan = planLocks(locks);
  // A call's own format is checked against every mode before anything is sent; the client's default, by the backend.
  for (const { mode } of plan) if (resolved.nodeFormat) nodeFormatFor(mode, resolved.nodeFormat, resolved.nodeFormat);
  const handles = await new MultiLockAcquisition(backend, plan, resolved, together).run();
  const { maxHoldMs } = resolved;
  if (maxHoldMs !== undefined && !handles.every(canExpireHold)) {
    await new LockGroupHandle(handles, together).release().catch(() => undefined); // the refusal is the answer
    throw new InvalidOptionError('maxHoldMs', maxHoldMs, multiLockMessages.maxHoldUnsupported);
  }
  // The locks were taken without maxHoldMs: its clock starts now, once the whole group is held.
  return new LockGroupHandle(handles, together, maxHoldMs);
}

/** A round ended because a lock it held was lost: give everything back and start over. */
const RESTART = Symbol('restart');

type Held = Array<LockHandle | undefined>;

/**
 * One call to take several locks, all or nothing, over any `LockBackend`. Deadlock-free by
 * one rule: it waits for a lock only while it holds no lock that comes after it in the
 * canonical order (`planLocks`). Each round tries every lock not yet held at once (on
 * ZooKeeper the requests go out together, the creates as one transaction, or several for
 * a group over 512 KiB: free locks cost one round trip and one commit, not one each;
 * nothing here needs them in one); at the first lock taken elsewhere it gives back the
 * later ones it got, waits for that one, and tries the rest again. Each wait ends
 * with a longer run of locks held from the first, so a call waits at most once per lock. On timeout, abort, cancellation or any
 * error, every lock it holds is released before it rejects; if a lock it holds is lost
 * meanwhile (a session expired), it gives back the others and starts over, within the
 * same deadline.
 */
export class MultiLockAcquisition {
  private stopError: Error | undefined;
  private round: AbortController | undefined;
  /** The first lock not held yet: the one a timeout or an abort names. */
  private blocked = 0;

  constructor(
    private readonly backend: LockBackend,
    private readonly plan: readonly PlannedLock[],
    private readonly options: ResolvedMultiAcquireOptions,
    /** The backend's way to try several locks in one go; each on its own without it. */
    private readonly together?: LockGroupRequests,
  ) {}

  async run(): Promise<LockHandle[]> {
    const { timeoutMs, signal } = this.options;
    const current = (): PlannedLock => this.plan[this.blocked];
    // One deadline for the whole call; timeoutMs 0 never waits, so it needs no timer.
    const timer =
      timeoutMs > 0
        ? longTimeout(() => this.stop(new LockTimeoutError(current().name, current().mode, timeoutMs)), timeoutMs)
        : undefined;
    const onAbort = (): void => this.stop(new LockAbortedError(current().name, signal!.reason));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (this.stopError) throw this.stopError;
        const outcome = await this.attempt();
        if (outcome !== RESTART) return outcome;
      }
    } finally {
      timer?.clear();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private stop(error: Error): void {
    if (this.stopError) return;
    this.stopError = error;
    this.round?.abort(error);
  }

  /** One round; RESTART when a lock it held was lost. Holds nothing when it does not resolve with all. */
  private async attempt(): Promise<LockHandle[] | typeof RESTART> {
    const round = (this.round = new AbortController());
    const held: Held = this.plan.map(() => undefined);
    const watch = new LossWatch(() => round.abort(RESTART));
    let granted = false;
    try {
      for (let from = 0; from < this.plan.length;) {
        const blocked = await this.tryFrom(from, held, round.signal, watch);
        if (blocked === undefined) break;
        this.blocked = blocked;
        // Later locks first: a client never waits while holding a lock after the one it waits for.
        await giveBack(held, blocked + 1, watch);
        const { name, mode } = this.plan[blocked];
        if (this.options.timeoutMs === 0) throw new LockTimeoutError(name, mode, 0);
        watch.arm(); // from now on a lock lost while this one is awaited ends the wait
        const { nodeFormat, release } = this.options;
        held[blocked] = watch.add(
          await this.backend.acquire(name, { mode, nodeFormat, release, timeoutMs: Infinity, signal: round.signal }),
        );
        from = blocked + 1;
      }
      if (this.stopError) throw this.stopError; // granted as the deadline passed: the deadline wins
      if (!held.every((handle) => handle?.isHeld())) return RESTART;
      granted = true;
      return held as LockHandle[];
    } catch (error) {
      if (this.stopError) throw this.stopError;
      if (round.signal.reason === RESTART) return RESTART;
      throw error;
    } finally {
      watch.clear();
      if (!granted) await giveBack(held, 0, watch);
    }
  }

  /**
   * Tries every lock from `from` on at once, without waiting for any holder, and keeps
   * what it gets. Resolves with the index of the first lock taken elsewhere, if any;
   * rejects with the first error once every try has settled (what they got stays in `held`).
   */
  private async tryFrom(from: number, held: Held, signal: AbortSignal, watch: LossWatch): Promise<number | undefined> {
    this.blocked = from;
    const locks = this.plan.slice(from);
    const { nodeFormat, release } = this.options;
    // Each try listens to a signal of its own, fed by one listener on the round's.
    const fanOut = fanOutAbort(signal, locks.length);
    const results = await (
      this.together && locks.length > 1
        ? this.together.tryAll(locks, fanOut.signals, { nodeFormat, release })
        : Promise.allSettled(
            locks.map(async ({ name, mode }, i) =>
              this.backend.tryAcquire(name, { mode, nodeFormat, release, signal: fanOut.signals[i] }),
            ),
          )
    ).finally(fanOut.dispose);
    let blocked: number | undefined;
    let failure: PromiseRejectedResult | undefined;
    // A call that may wait waits for a lock it could not even ask for (no session connected
    // then), as for one taken elsewhere: a short blip must not fail it; its deadline still holds.
    const waits = this.options.timeoutMs > 0;
    results.forEach((result, offset) => {
      if (result.status === 'rejected' && waits && result.reason instanceof LockUnavailableError)
        blocked ??= from + offset;
      else if (result.status === 'rejected') failure ??= result;
      else if (result.value) held[from + offset] = watch.add(result.value);
      else blocked ??= from + offset;
    });
    if (failure) throw failure.reason;
    return blocked;
  }
}

/** Releases the held locks from index `from` on, all at once, and waits for the releases. */
async function giveBack(held: Held, from: number, watch: LossWatch): Promise<void> {
  const handles: LockHandle[] = [];
  for (let i = from; i < held.length; i++) {
    const handle = held[i];
    if (!handle) continue;
    held[i] = undefined;
    watch.remove(handle);
    handles.push(handle);
  }
  // A failed release is the backend's to finish (ZooKeeper's reaper retries it); the
  // call's own outcome is what the caller needs.
  await Promise.allSettled(handles.map((handle) => handle.release()));
}

/**
 * Calls `onLost` when any handle it watches is lost, once armed: a round that waits for no
 * holder never subscribes (the check of every handle at its end covers it).
 */
class LossWatch {
  private readonly listeners = new Map<LockHandle, (() => void) | undefined>();
  private armed = false;

  constructor(private readonly onLost: () => void) {}

  add(handle: LockHandle): LockHandle {
    this.listeners.set(handle, this.armed ? this.follow(handle) : undefined);
    return handle;
  }

  arm(): void {
    if (this.armed) return;
    this.armed = true;
    for (const handle of this.listeners.keys()) this.listeners.set(handle, this.follow(handle));
  }

  remove(handle: LockHandle): void {
    this.listeners.get(handle)?.();
    this.listeners.delete(handle);
  }

  clear(): void {
    for (const stop of this.listeners.values()) stop?.();
    this.listeners.clear();
  }

  /** Subscribes to `handle`'s loss; returns the unsubscribe. */
  private follow(handle: LockHandle): (() => void) | undefined {
    const { signal } = handle;
    if (signal.aborted) {
      this.onLost();
      return undefined;
    }
    const listener = (): void => this.onLost();
    signal.addEventListener('abort', listener, { once: true });
    return () => signal.removeEventListener('abort', listener);
  }
}

/**
 * `count` signals that abort with `signal`, by one listener on it: what several
 * operations at once listen to, instead of one listener each on the shared signal (which
 * Node reports as a `MaxListenersExceededWarning` from the eleventh on). `dispose()`
 * removes the listener once the operations have settled.
 */
export function fanOutAbort(signal: AbortSignal, count: number): { signals: AbortSignal[]; dispose(): void } {
  const controllers = Array.from({ length: count }, () => new AbortController());
  const onAbort = (): void => {
    for (const controller of controllers) controller.abort(signal.reason);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    signals: controllers.map((controller) => controller.signal),
    dispose: () => signal.removeEventListener('abort', onAbort),
  };
}
