import { AsyncLocalStorage } from 'node:async_hooks';

import { watchLoss } from '../reentrancy/loss-watch.js';
import { checkOnLockLost, type OnLockLost } from '../reentrancy/call-options.js';
import { type LockLostError, InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { PendingWork } from '../util/pending-work.js';
import type { LeaderTerm, LeadershipTerm } from './leadership-term.js';

/** Options of `LeaderElection.runAsLeader` (and `@WhenLeader`). */
export interface LeaderWorkOptions {
  /**
   * What the call does when the term it started under ends while the function runs (the
   * lock lost, or the instance stepped down): `reject` (default) rejects with the term's
   * `LockLostError` once the function settles, whatever it returned; `ignore` returns its
   * result anyway.
   */
  readonly onLockLost?: OnLockLost;
  /** Told once, as soon as the term ends while the function runs (for a log line). */
  readonly onLost?: (error: LockLostError, ignored: boolean) => void;
}

const OPTION_KEYS: readonly string[] = ['onLockLost', 'onLost'];

export interface ResolvedLeaderWorkOptions {
  readonly onLockLost: OnLockLost;
  readonly onLost?: LeaderWorkOptions['onLost'];
}

/** Checks the options before anything runs: `InvalidOptionError` for a bad value or an unknown key. */
export function resolveLeaderWorkOptions(options: LeaderWorkOptions | undefined): ResolvedLeaderWorkOptions {
  if (options === undefined) return { onLockLost: 'reject' };
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object such as { onLockLost: "ignore" }');
  assertKnownOptions(options, OPTION_KEYS, 'leader work (runAsLeader, @WhenLeader)');
  const { onLockLost = 'reject', onLost } = options;
  checkOnLockLost(onLockLost);
  if (onLost !== undefined && typeof onLost !== 'function')
    throw new InvalidOptionError('onLost', onLost, 'a function');
  return { onLockLost, onLost };
}

/** The terms the current async call chain runs under, by election. Never mutated: copied on entry. */
type TermScope = ReadonlyMap<object, LeaderTerm>;

// One storage per process, shared by every loaded copy of the package, like the lock scope.
const KEY = Symbol.for('nestjs-zk-lock.leader-terms.v1');
const holder = globalThis as typeof globalThis & { [KEY]?: AsyncLocalStorage<TermScope> };
const termStorage: AsyncLocalStorage<TermScope> = (holder[KEY] ??= new AsyncLocalStorage<TermScope>());

/** The term the current call chain runs under for `election`, if it runs leader work of it. */
export function termInScope(election: object): LeaderTerm | undefined {
  return termStorage.getStore()?.get(election);
}

/** Every term the current call chain runs leader work under, of any election, outermost first. */
export function termsInScope(): LeaderTerm[] {
  return [...(termStorage.getStore()?.values() ?? [])];
}

/**
 * The leader-only work of one election: each run is tracked (so that stepping down can
 * wait for it), runs with its term in scope (so that it reads the term it started under,
 * even once another began), and settles as `withLock` does: the function's result, unless
 * the term ended meanwhile.
 */
export class LeaderWork {
  private readonly running = new PendingWork();

  constructor(private readonly election: object) {}

  async run<T>(
    term: LeadershipTerm,
    fn: (term: LeaderTerm) => T | Promise<T>,
    options: ResolvedLeaderWorkOptions,
  ): Promise<T> {
    const { view } = term;
    const ignore = options.onLockLost === 'ignore';
    const { onLost } = options;
    const stopWatching = onLost ? watchLoss(term, (error) => onLost(error, ignore)) : undefined;
    const scope = new Map(termStorage.getStore());
    scope.set(this.election, view);
    const body = termStorage.run(scope, async () => fn(view));
    const settled = body.catch(() => undefined);
    void this.running.track(settled);
    term.track(settled);
    try {
      const result = await body;
      if (!(ignore && term.signal.aborted)) view.assertLeading();
      return result;
    } finally {
      stopWatching?.();
    }
  }

  /** Waits until no run is under way, or `timeoutMs` passed; resolves whether they all ended. */
  drain(timeoutMs: number): Promise<boolean> {
    return this.running.drainWithin(timeoutMs);
  }
}
