import { WithLockUsageError } from '../errors/errors.js';
import { nestMessages, type Decorator } from '../errors/messages.js';
import { lockServiceRegistry, type LockServiceLike } from '../service-registry.js';
import { wrapMethod } from './decorated-methods.js';
import { InvalidLockNameError, ZkLockError } from '../../core/errors/errors.js';

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
 * `unknown` when method `M` may resolve `undefined` (its Promise's type admits it: `void`,
 * `T | undefined`, `unknown`, `any`); otherwise a type no descriptor has, whose property
 * name `Why` says why, so the compiler refuses a decorator that can skip the method.
 */
export type AdmitsUndefined<M, Why extends string> = M extends (...args: any[]) => Promise<infer R>
  ? undefined extends R
    ? unknown
    : { [key in Why]: R }
  : unknown;

/**
 * Whether `@WithLock` options `O` can skip the method (`ifLocked: 'skip'`, or an options
 * object whose type allows it): then the call can resolve `undefined` without running it.
 */
export type MaySkip<O> = 'ifLocked' extends keyof O ? ('skip' extends O['ifLocked' & keyof O] ? true : false) : false;

/**
 * Refuses keys of `O` that `Known` lacks: options inferred into a type parameter (to read
 * their `ifLocked`) lose TypeScript's excess-property check, which catches a misspelt option.
 */
export type NoExtraKeys<O, Known> = O extends object
  ? { readonly [key in Exclude<keyof O, keyof Known>]: never }
  : unknown;

/**
 * A method decorator that accepts only async methods whose parameters fit key function
 * `K` and, when it can skip the method (`Skips`), whose declared type admits `undefined`.
 * On a property or an accessor the compiler refuses it (TS1240/TS1241); code compiled
 * without type checks gets our `WithLockUsageError` when the class is defined.
 */
export type LockMethodDecorator<K, Skips extends boolean = false> = <M extends AsyncMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M> &
    KeyFits<K, M> &
    ResultFits<M> &
    (Skips extends true
      ? AdmitsUndefined<M, "with ifLocked: 'skip' the method can resolve undefined: declare Promise<T | undefined>">
      : unknown),
) => void;

/** How a lock decorator runs one call: `body` is the original method, bound to its call. */
export type LockedCall = (
  service: LockServiceLike,
  args: unknown[],
  body: () => unknown,
  method: string,
) => Promise<unknown>;

type LockDecorator = '@WithLock' | '@WithLease';

/**
 * Checks a lock decorator's declaration when the class is defined: a name (or key
 * function), no `signal` (a decorator cannot know which call to cancel), and options that
 * `resolve` accepts (its error becomes a `WithLockUsageError` naming the decorator).
 */
export function checkDeclaration(
  decorator: LockDecorator,
  name: unknown,
  options: unknown,
  resolve: () => unknown,
): void {
  if (typeof name !== 'function' && (typeof name !== 'string' || name === ''))
    throw new WithLockUsageError(nestMessages.needsName(decorator, name));
  if (options && typeof options === 'object' && 'signal' in options)
    throw new WithLockUsageError(
      nestMessages.noSignal(decorator, decorator === '@WithLock' ? 'withLock' : 'withLease'),
    );
  try {
    resolve();
  } catch (error) {
    throw new WithLockUsageError(nestMessages.badOption(decorator, (error as Error).message), { cause: error });
  }
}

/**
 * The decorator `@WithLock` and `@WithLease` make of `run`, which does to a method: check it is one (and not a generator,
 * whose body runs after the call returns), replace it with an async function that finds
 * its application's `LockService` at call time and runs the original through `run`, and
 * refuse a result consumed after the release (see `streamingKind`).
 */
export function lockDecorator(
  decorator: LockDecorator,
  metadata: { readonly key: symbol; readonly value: unknown },
  run: LockedCall,
): (target: object, key: string | symbol, descriptor?: PropertyDescriptor) => void {
  return (target, key, descriptor) =>
    wrapMethod(
      target,
      key,
      descriptor,
      metadata,
      (method) => new WithLockUsageError(nestMessages.notAMethod(decorator, method)),
      (original, method) => {
        const kind = original.constructor?.name;
        if (kind === 'AsyncGeneratorFunction' || kind === 'GeneratorFunction')
          throw new WithLockUsageError(nestMessages.generator(decorator, method));
        return async function (this: unknown, ...args: unknown[]): Promise<unknown> {
          const service = lockServiceRegistry.serviceFor(this, method, decorator);
          const body = (): unknown => lockServiceRegistry.runFor(service, () => original.apply(this, args));
          const result = await run(service, args, body, method);
          const streaming = streamingKind(result);
          if (streaming) throw new WithLockUsageError(nestMessages.streaming(decorator, method, streaming));
          return result;
        };
      },
    );
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

/**
 * What a decorator's name source gives for one call: the fixed name, or the key function's
 * result for the method's arguments. A key function that throws, or returns something
 * `accept` refuses, fails with `InvalidLockNameError` naming the decorator and method.
 */
export function keyFor<K>(
  source: string | ((...args: any[]) => unknown),
  args: unknown[],
  where: { readonly decorator: Decorator; readonly method: string; readonly expected: string },
  accept: (value: unknown) => value is K,
): string | K {
  if (typeof source === 'string') return source;
  let key: unknown;
  try {
    key = source(...args);
  } catch (error) {
    if (error instanceof ZkLockError) throw error;
    throw new InvalidLockNameError(undefined, nestMessages.keyFunctionThrew(where.decorator, where.method, error));
  }
  if (accept(key) || (typeof key === 'string' && key !== '')) return key as string | K;
  throw new InvalidLockNameError(key, nestMessages.keyFunctionReturned(where.decorator, where.method, where.expected));
}
