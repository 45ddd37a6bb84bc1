import { InvalidGroupError, InvalidLockNameError } from '../errors/errors.js';
import { encodeLockName } from './lock-name-codec.js';

/**
 * A group name or a member id, checked and encoded as one ZooKeeper node name (the lock
 * name codec's rules: any non-empty, well-formed string). Throws `InvalidGroupError`
 * naming which of the two was wrong.
 */
export function encodeGroupName(what: 'group' | 'memberId', value: unknown): string {
  try {
    return encodeLockName(value);
  } catch (error) {
    if (!(error instanceof InvalidLockNameError)) throw error;
    throw new InvalidGroupError(what, value, error.why);
  }
}
