import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/**
 * Where the client stood when a call gave up for want of a connected session:
 * `disconnected` (the session lives, its connection is being re-established) or `lost`
 * (the session was given up; a new one has not connected yet).
 */
export type UnavailableState = 'disconnected' | 'lost';

/**
 * No ZooKeeper session was connected when a call had to answer: at once for a try
 * (`tryAcquire`, `timeoutMs: 0`), or when a call's deadline passed. Nobody was found
 * holding the lock: nothing could be asked. Retry once ZooKeeper is reachable again.
 */
export class LockUnavailableError extends ZkLockError {
  readonly code = 'LOCK_UNAVAILABLE';

  constructor(
    /** What could not be answered, e.g. `lock "orders/42" (write)` or `locks()`. */
    readonly subject: string,
    readonly state: UnavailableState,
    /** How long no session had been connected, in ms. */
    readonly unavailableForMs: number,
    /** When that began (`Date.now()` time): one value per outage, for logging it once. */
    readonly unavailableSince: number,
  ) {
    super(lockMessages.unavailable(subject, state, unavailableForMs));
  }
}
