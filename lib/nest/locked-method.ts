import { copyMethodMetadata } from './copy-method-metadata.js';
import { WithLockUsageError } from './errors/with-lock-usage.error.js';
import { ZkLockModuleMissingError } from './errors/zk-lock-module-missing.error.js';
import { refuseGenerators } from './key-function.js';
import { lockServiceRegistry, type LockRunner } from './lock-service.registry.js';
import { methodLabel } from './method-label.js';
import { refuseStreamingResult } from './streaming-result.js';

/** How a lock decorator runs one call: `body` is the original method, bound to its call. */
export type LockedCall = (
  service: LockRunner,
  args: unknown[],
  body: () => unknown,
  method: string,
) => Promise<unknown>;

/**
 * What `@WithLock` and `@WithLease` do to a method: check it is one (and not a
 * generator, nor resolving to a stream or an Observable: see `streamingKind`), replace it with an async function that finds its application's
 * `LockService` at call time and runs the original through `run`, and keep every other
 * decorator's metadata plus `metadata` under `metadataKey`.
 */
export function lockMethod(
  decorator: '@WithLock' | '@WithLease',
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor | undefined,
  metadata: { readonly key: string | symbol; readonly value: unknown },
  run: LockedCall,
): void {
  const method = methodLabel(target, key);
  const original = descriptor?.value;
  if (typeof original !== 'function') {
    throw new WithLockUsageError(
      `${decorator} can only decorate a method, and ${method} is not one (a property, getter or setter). Put it on a method.`,
    );
  }
  refuseGenerators(decorator, method, original);
  const wrapped = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const service = lockServiceRegistry.find(this);
    if (typeof service === 'string') throw new ZkLockModuleMissingError(method, service, decorator);
    const result = await run(
      service,
      args,
      () => lockServiceRegistry.runFor(service, () => original.apply(this, args)),
      method,
    );
    refuseStreamingResult(decorator, method, result);
    return result;
  };
  copyMethodMetadata(original, wrapped);
  Reflect.defineMetadata?.(metadata.key, metadata.value, wrapped);
  descriptor!.value = wrapped;
}
