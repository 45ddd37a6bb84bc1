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
