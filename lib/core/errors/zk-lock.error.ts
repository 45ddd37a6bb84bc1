/** Base class of every error this library throws, so callers can catch them all at once. */
export abstract class ZkLockError extends Error {
  /** Stable, machine-readable code, e.g. `LOCK_TIMEOUT`. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
