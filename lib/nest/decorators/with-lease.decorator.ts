import type { LeaseCallOptions } from '../../core/reentrancy/call-options.js';
import { resolveLeaseOptions } from '../../core/port/options.js';
import { type LockMethodDecorator, lockMethod } from './locked-method.js';
import { keyFor } from './key-function.js';
import { WITH_LEASE_METADATA } from './decorated-methods.js';
import { WithLockUsageError, ZkLockModuleMissingError } from '../errors/errors.js';

/** Options of `@WithLease`: `maxLeases` (required, the same for every client) and `timeoutMs` (default: the module's `acquireTimeoutMs`). */
export type WithLeaseOptions = Omit<LeaseCallOptions, 'signal'>;

/**
 * Runs the method holding one of `maxLeases` leases on a semaphore shared by every
 * instance: at most `maxLeases` calls run at once across the service (e.g. calls to a
 * partner API that allows 5 at a time). The method becomes async. Not reentrant: a
 * decorated method calling another one on the same semaphore takes a second lease.
 *
 * ```ts
 * @WithLease('partner-api', { maxLeases: 5 })
 * async quote(order: Order) { … }
 * ```
 */
export function WithLease<const K extends string | ((...args: any[]) => string)>(
  name: K,
  options: WithLeaseOptions,
): LockMethodDecorator<K> {
  checkDeclaration(name, options);
  return (target: object, key: string | symbol, descriptor?: PropertyDescriptor) =>
    lockMethod(
      '@WithLease',
      target,
      key,
      descriptor,
      { key: WITH_LEASE_METADATA, value: { name, options } },
      (service, args, body, method) => {
        if (!service.withLease)
          throw new ZkLockModuleMissingError(
            method,
            'the LockService it found (a mock?) has no withLease',
            '@WithLease',
          );
        return service.withLease(leaseNameFor(name, args, method), body, options);
      },
    );
}

function checkDeclaration(name: unknown, options: WithLeaseOptions | undefined): void {
  if (typeof name !== 'function' && (typeof name !== 'string' || name === '')) {
    throw new WithLockUsageError(
      `@WithLease needs a semaphore name: a non-empty string or a function of the method's arguments, not ${typeof name === 'string' ? 'an empty string' : typeof name}.`,
    );
  }
  if (options && typeof options === 'object' && 'signal' in options) {
    throw new WithLockUsageError(
      '@WithLease takes no signal option: a decorator cannot know which call to cancel. Use LockService.withLease with a signal instead.',
    );
  }
  try {
    resolveLeaseOptions(options, 0);
  } catch (error) {
    throw new WithLockUsageError(`@WithLease: ${(error as Error).message}`);
  }
}

function leaseNameFor(source: string | ((...args: any[]) => string), args: unknown[], method: string): string {
  return keyFor(
    source,
    args,
    { decorator: '@WithLease', method, expected: 'a non-empty string' },
    (_key): _key is never => false,
  );
}
