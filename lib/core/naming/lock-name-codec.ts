import { InvalidLockNameError } from '../errors/errors.js';

/** Longest directory name a lock name may encode to; ZooKeeper paths travel in every request. */
export const MAX_ENCODED_NAME_LENGTH = 1024;

// Characters kept as they are: readable names (`orders`, `job:nightly`) stay readable in
// ZooKeeper, so a Kazoo service can use the same path by hand.
const SAFE = /^[A-Za-z0-9_.~:@-]$/;
const ALL_SAFE = /^[A-Za-z0-9_.~:@-]+$/;
// In a `u` regex a surrogate pair is one code point, so this matches only unpaired halves.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Maps any non-empty, well-formed string to exactly one ZooKeeper node name, and two
 * different strings never to the same one: every byte outside a safe set, including `%`
 * and `/`, becomes `%XX` (UTF-8), and the names `.` and `..` have their dots escaped.
 * Throws `InvalidLockNameError` for anything else.
 */
export function encodeLockName(name: unknown): string {
  if (typeof name !== 'string') throw new InvalidLockNameError(name, 'a lock name must be a string');
  if (name.length === 0) throw new InvalidLockNameError(name, 'it is empty');
  if (LONE_SURROGATE.test(name)) {
    throw new InvalidLockNameError(name, 'it contains a lone UTF-16 surrogate, which has no UTF-8 form');
  }
  if (name === '.' || name === '..') return name.replace(/\./g, '%2E');
  // Most names need no escaping: one test instead of a character loop on the hot path.
  if (name.length <= MAX_ENCODED_NAME_LENGTH && ALL_SAFE.test(name)) return name;
  let out = '';
  for (const char of name) out += SAFE.test(char) ? char : percentEncode(char);
  if (out.length > MAX_ENCODED_NAME_LENGTH) {
    throw new InvalidLockNameError(
      name,
      `it encodes to ${out.length} characters, over the limit of ${MAX_ENCODED_NAME_LENGTH}; use a shorter name (or a hash of it)`,
    );
  }
  return out;
}

/** The inverse of `encodeLockName`, for listing locks found in ZooKeeper. */
export function decodeLockName(encoded: string): string {
  return decodeURIComponent(encoded);
}

function percentEncode(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}
