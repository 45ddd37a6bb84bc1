import { copyMethodMetadata, methodLabel } from './decorated-methods.js';
import { WithLockUsageError, ZkLockModuleMissingError } from '../errors/errors.js';
import { refuseGenerators } from './key-function.js';
import { lockServiceRegistry, type LockServiceLike } from '../service-registry.js';

/**
 * The types that let the compiler check a decorated method against its lock decorator
 * (`@WithLock`, `@WithLease`): the method must be async (the lock is held until its
 * Promise settles, so a synchronous method, an async generator, an Observable or a
 * Promise of a stream would run or be read unlocked), and a key function's parameters must match the method's first parameters.
 */

/** What a lock decorator can wrap: a method that returns a Promise. */
export type AsyncMethod = (...args: any[]) => Promise<unknown>;

/**
 * `unknown` when key function `K` fits method `M` (its parameters are the method's first
 * ones, each accepting what the method gets); otherwise a type no descriptor has, whose
 * property name says why, so the compiler refuses the decoration.
 */
export type KeyFits<K, M> = K extends (...args: infer KeyArgs) => unknown
  ? M extends (...args: infer MethodArgs) => unknown
    ? MethodArgs extends [...KeyArgs, ...unknown[]]
      ? unknown
      : { 'the key function must take the same first parameters as the method': KeyArgs; method: MethodArgs }
    : unknown
  : unknown;

/** What is consumed after the method returned (see `streamingKind`): an Observable, a `StreamableFile`, a stream, an async iterable. */
type Streaming =
  | { subscribe(...args: any[]): unknown; pipe(...args: any[]): unknown }
  | { getStream(...args: any[]): unknown; getHeaders(...args: any[]): unknown }
  | { pipe(...args: any[]): unknown; on(...args: any[]): unknown }
  | { getReader(...args: any[]): unknown; pipeTo(...args: any[]): unknown }
  | AsyncIterable<unknown>;

/**
 * `unknown` when method `M` resolves to a plain value; a type no descriptor has when it
 * resolves to something consumed after it returned, after the lock's release (only when
 * every possible value is such a thing: `any`, `unknown` and mixed unions are checked at run time).
 */
export type ResultFits<M> = M extends (...args: any[]) => Promise<infer R>
  ? 0 extends 1 & R
    ? unknown
    : [R] extends [never]
      ? unknown
      : [R] extends [Streaming]
        ? { 'the method resolves to a stream or an Observable, consumed after the lock is released': R }
        : unknown
  : unknown;

/**
 * A method decorator that accepts only async methods whose parameters fit key function
 * `K`. On a property or an accessor the compiler refuses it (TS1240/TS1241); code compiled
 * without type checks gets our `WithLockUsageError` when the class is defined.
 */
export type LockMethodDecorator<K> = <M extends AsyncMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M> & KeyFits<K, M> & ResultFits<M>,
) => void;

/** How a lock decorator runs one call: `body` is the original method, bound to its call. */
export type LockedCall = (
  service: LockServiceLike,
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

/**
 * What a value does after the method that returned it: an Observable runs when subscribed,
 * a `StreamableFile`, a Node or web stream, or any async iterable is read later (by Nest,
 * after the handler resolved). Under a lock decorator that is after the release.
 */
export function streamingKind(value: unknown): string | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const has = (key: string | symbol): boolean => typeof (value as Record<string | symbol, unknown>)[key] === 'function';
  // Pairs of methods, so that a domain object with a `subscribe` or a `pipe` of its own passes.
  if (has('subscribe') && has('pipe')) return 'an Observable';
  if (has('getStream') && has('getHeaders')) return 'a StreamableFile';
  if ((has('pipe') && has('on')) || (has('getReader') && has('pipeTo')) || has(Symbol.asyncIterator)) return 'a stream';
  return undefined;
}

/** Refuses a result that would be consumed after the lock's release (see `streamingKind`). */
export function refuseStreamingResult(decorator: string, method: string, result: unknown): void {
  const kind = streamingKind(result);
  if (!kind) return;
  throw new WithLockUsageError(
    `${decorator} cannot cover ${method}: it returned ${kind}, which is consumed after the method returned, when the lock is already released. Lock inside the producer instead (LockService.withLock around the work that fills it), or collect the values in the method and return them.`,
  );
}
