import { InvalidOptionError } from '../errors/errors.js';

/** The calls of `ReentrantLocker` (and `LockService`) take one more option than the backends. */
export interface ReentrancyOption {
  /**
   * `false` makes the call queue a node of its own, like Curator's non-reentrant
   * `InterProcessSemaphoreMutex`: inside a call chain that already holds the lock it fails
   * at once with `LockReentryError` instead of waiting for itself. Default `true`.
   */
  readonly reentrant?: boolean;
}

/** The `reentrant` option, checked before anything is sent. */
export function resolveReentrant(options: ReentrancyOption | undefined): boolean {
  const { reentrant = true } = options ?? {};
  if (typeof reentrant !== 'boolean') throw new InvalidOptionError('reentrant', reentrant, 'true or false');
  return reentrant;
}
