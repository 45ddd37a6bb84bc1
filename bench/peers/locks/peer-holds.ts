import type { PeerHold } from '../peer-lock.js';

/**
 * The hold of a lock that tells its holder through an `AbortSignal` alone (redlock's
 * `using`, redis-semaphore's `onLockLost`): held until the signal aborts; no token.
 */
export function signalHold(signal: AbortSignal): PeerHold {
  return { token: undefined, signal, isHeld: () => !signal.aborted };
}

/**
 * The hold of a lock that never tells its holder anything (murlock; nest-redlock's
 * decorator, which hands the method no signal): always "held", a signal that never
 * aborts, no token. A holder of such a lock writes on after its lock expired.
 */
export function neverToldHold(): PeerHold {
  return signalHold(new AbortController().signal);
}
