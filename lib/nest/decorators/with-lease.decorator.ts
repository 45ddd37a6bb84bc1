import type { LeaseCallOptions } from '../../core/reentrancy/call-options.js';
import { resolveLeaseOptions } from '../../core/port/options.js';
import { checkDeclaration, type LockMethodDecorator, lockDecorator, keyFor } from './locked-method.js';
import { WITH_LEASE_METADATA } from './decorated-methods.js';
import { ZkLockModuleMissingError } from '../errors/errors.js';
import { nestMessages } from '../errors/messages.js';

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
  checkDeclaration('@WithLease', name, options, () => resolveLeaseOptions(options, 0));
  return lockDecorator(
    '@WithLease',
    { key: WITH_LEASE_METADATA, value: { name, options } },
    (service, args, body, method) => {
      if (!service.withLease)
        throw new ZkLockModuleMissingError(method, nestMessages.noService.mockWithoutWithLease, '@WithLease');
      return service.withLease(leaseNameFor(name, args, method), body, options);
    },
  );
}

function leaseNameFor(source: string | ((...args: any[]) => string), args: unknown[], method: string): string {
  return keyFor(
    source,
    args,
    { decorator: '@WithLease', method, expected: 'a non-empty string' },
    (_key): _key is never => false,
  );
}
