import { InvalidLockNameError, InvalidOptionError, InvalidLeaderGroupError } from '../errors/errors.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { MAX_TIMER_MS } from '../util/long-timeout.js';

/** Options of a `LeaderElection`. */
export interface LeaderElectionOptions {
  /** How long to wait before queueing again after a failed attempt, in ms. Default 1000. */
  readonly retryDelayMs?: number;
}

export const DEFAULT_RETRY_DELAY_MS = 1000;

/**
 * The lock whose holder leads `group`: `leader:<group>`. Throws `InvalidLeaderGroupError`
 * for anything that is not a non-empty string making a valid lock name.
 */
export function leaderLockName(group: unknown): string {
  if (typeof group !== 'string') throw new InvalidLeaderGroupError(group, 'a leader group must be a string');
  if (group === '') throw new InvalidLeaderGroupError(group, 'it is empty');
  const lockName = `leader:${group}`;
  try {
    encodeLockName(lockName);
  } catch (error) {
    if (!(error instanceof InvalidLockNameError)) throw error;
    throw new InvalidLeaderGroupError(group, `its lock name "leader:…" is not valid: ${error.why}`, error);
  }
  return lockName;
}

/** The retry delay, checked: a number of ms a timer can wait (up to about 24.8 days). */
export function resolveRetryDelay(options: LeaderElectionOptions | undefined): number {
  const { retryDelayMs = DEFAULT_RETRY_DELAY_MS } = options ?? {};
  if (typeof retryDelayMs !== 'number' || !(retryDelayMs >= 0 && retryDelayMs <= MAX_TIMER_MS)) {
    throw new InvalidOptionError('retryDelayMs', retryDelayMs, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  return retryDelayMs;
}

/** The grace of `LeaderElection.stop()`: any number of ms >= 0 (`Infinity`: until the work ends). */
export function resolveGraceMs(options: { readonly graceMs?: number } | undefined): number {
  const { graceMs = 0 } = options ?? {};
  if (typeof graceMs !== 'number' || !(graceMs >= 0))
    throw new InvalidOptionError('graceMs', graceMs, 'a number of milliseconds >= 0');
  return graceMs;
}
