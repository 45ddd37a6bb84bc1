import { InvalidOptionError } from '../errors/errors.js';

/**
 * Checks a duration option given in whole milliseconds, from `min` to `max` (by default the
 * largest safe integer: every timer of the library waits that long, see `longTimeout`).
 * The error names the range, so a value past the limit says what the limit is.
 */
export function wholeMilliseconds(option: string, value: unknown, min: 0 | 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(option, value, `a whole number of milliseconds from ${min} to ${max}`);
  }
  return value;
}
