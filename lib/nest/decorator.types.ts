/**
 * The types that let the compiler check a decorated method against its lock decorator
 * (`@WithLock`, `@WithLease`): the method must be async (the lock is held until its
 * Promise settles, so a synchronous method, an async generator or an Observable would run
 * unlocked), and a key function's parameters must match the method's first parameters.
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

/**
 * A method decorator that accepts only async methods whose parameters fit key function
 * `K`. On a property or an accessor the compiler refuses it (TS1240/TS1241); code compiled
 * without type checks gets our `WithLockUsageError` when the class is defined.
 */
export type LockMethodDecorator<K> = <M extends AsyncMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M> & KeyFits<K, M>,
) => void;
