import { InvalidLockNameError, ZkLockError } from '../../core/errors/errors.js';
import { WithLockUsageError } from '../errors/errors.js';

/**
 * What a decorator's name source gives for one call: the fixed name, or the key function's
 * result for the method's arguments. A key function that throws, or returns something
 * `accept` refuses, fails with `InvalidLockNameError` naming the decorator and method.
 */
export function keyFor<K>(
  source: string | ((...args: any[]) => unknown),
  args: unknown[],
  where: { readonly decorator: string; readonly method: string; readonly expected: string },
  accept: (value: unknown) => value is K,
): string | K {
  if (typeof source === 'string') return source;
  let key: unknown;
  try {
    key = source(...args);
  } catch (error) {
    if (error instanceof ZkLockError) throw error;
    throw new InvalidLockNameError(
      undefined,
      `the key function of ${where.decorator} on ${where.method} threw: ${(error as Error)?.message ?? String(error)}`,
    );
  }
  if (accept(key) || (typeof key === 'string' && key !== '')) return key as string | K;
  throw new InvalidLockNameError(
    key,
    `the key function of ${where.decorator} on ${where.method} must return ${where.expected}`,
  );
}

/**
 * A generator method returns its iterator at once and runs its body later, step by step:
 * a lock held "around the call" would not cover it. Refused when the class is defined.
 */
export function refuseGenerators(decorator: string, method: string, fn: Function): void {
  const kind = fn.constructor?.name;
  if (kind === 'AsyncGeneratorFunction' || kind === 'GeneratorFunction') {
    throw new WithLockUsageError(
      `${decorator} cannot cover ${method}: it is a generator, whose body runs after the call returns, one step at a time. Lock inside it instead (LockService.withLock around the work of each step, or around collecting the results).`,
    );
  }
}
