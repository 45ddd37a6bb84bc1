import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { resolveAcquireOptions } from './acquire-options.js';
import type { AcquireLeaseOptions } from './lease.js';
import { leaseMessages } from '../errors/messages.js';

/**
 * The largest `maxLeases`. Every acquire, and every waiter's wake-up, reads the whole
 * directory listing: a full semaphore of 1000 holds about 55 KB of node names, well under
 * ZooKeeper's 1 MB packet limit (`jute.maxbuffer`) with room for about 18,000 waiters.
 * Past that the listing, not the number of requests, is the cost of each grant.
 */
export const MAX_LEASES = 1000;

const KNOWN_OPTIONS: readonly string[] = ['maxLeases', 'timeoutMs', 'signal'];

export interface ResolvedLeaseOptions {
  readonly maxLeases: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Checks `acquireLease`'s options, unknown keys included, before anything is sent to ZooKeeper. */
export function resolveLeaseOptions(
  options: AcquireLeaseOptions | undefined,
  defaultTimeoutMs: number,
): ResolvedLeaseOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, leaseMessages.optionsObject);
  assertKnownOptions(options, KNOWN_OPTIONS, 'acquireLease/withLease/@WithLease');
  const { maxLeases } = options;
  if (typeof maxLeases !== 'number' || !Number.isInteger(maxLeases) || maxLeases < 1 || maxLeases > MAX_LEASES) {
    throw new InvalidOptionError('maxLeases', maxLeases, leaseMessages.maxLeases(MAX_LEASES));
  }
  // The wait's options mean what they mean for locks: checked by the same rules.
  const { timeoutMs, signal } = resolveAcquireOptions(
    { timeoutMs: options.timeoutMs, signal: options.signal },
    defaultTimeoutMs,
  );
  return { maxLeases, timeoutMs, signal };
}
