import { InvalidOptionError } from '../core/errors/errors.js';
import { fenceMessages } from '../core/errors/messages.js';

/** A bigint column holds at most this: every ZooKeeper zxid fits. */
const MAX_TOKEN = 2n ** 63n - 1n;

/** `token` if it is a bigint a `bigint` column holds and not negative; else `InvalidOptionError`. */
export function checkToken(token: unknown): bigint {
  if (typeof token !== 'bigint' || token < 0n || token > MAX_TOKEN)
    throw new InvalidOptionError('token', token, fenceMessages.token);
  return token;
}

/** The `token` of a row as a bigint (drivers answer a bigint column as a string, a number or a bigint), or null. */
export function readToken(row: object): bigint | null {
  const value = (row as { token?: unknown }).token;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? BigInt(value) : null;
}
