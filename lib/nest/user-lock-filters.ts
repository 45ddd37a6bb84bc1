import type { ExecutionContext } from '@nestjs/common';
import type { ApplicationConfig } from '@nestjs/core';

import { ZkLockError } from '../core/errors/errors.js';

// @nestjs/common's metadata keys (the same in Nest 11 and 12), read without a deep import.
const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';
const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';

type Catchable = abstract new (...args: never[]) => unknown;

/**
 * Whether the application has an exception filter of its own for `error`: one whose
 * `@Catch(...)` names `ZkLockError` or one of its subclasses that `error` is an instance
 * of, on the handler, on its class, or global (`app.useGlobalFilters`, `APP_FILTER`).
 * Such a filter gets the lock error as it is; catch-all filters (`@Catch()`) and
 * filters of other errors do not count: they get the mapped error, as Nest's own.
 */
export function hasUserLockFilter(error: unknown, context: ExecutionContext, config: ApplicationConfig): boolean {
  if (!(error instanceof ZkLockError)) return false;
  const filters: unknown[] = [
    ...config.getGlobalFilters(),
    ...config.getGlobalRequestFilters().map((wrapper) => wrapper.metatype),
    ...filtersOn(context.getClass()),
    ...filtersOn(context.getHandler()),
  ];
  return filters.some((filter) => catchTypesOf(filter).some((type) => isLockErrorType(type) && error instanceof type));
}

function filtersOn(target: object): unknown[] {
  return (Reflect.getMetadata?.(EXCEPTION_FILTERS_METADATA, target) as unknown[] | undefined) ?? [];
}

/** A filter's `@Catch` types: given as a class or as an instance. */
function catchTypesOf(filter: unknown): Catchable[] {
  if (!filter || (typeof filter !== 'object' && typeof filter !== 'function')) return [];
  const type = typeof filter === 'function' ? filter : (filter as object).constructor;
  const prototype =
    typeof filter === 'function' ? (filter as { prototype?: object }).prototype : Object.getPrototypeOf(filter);
  const read = (target: unknown): Catchable[] | undefined =>
    target ? (Reflect.getMetadata?.(FILTER_CATCH_EXCEPTIONS, target as object) as Catchable[] | undefined) : undefined;
  return read(prototype) ?? read(type) ?? [];
}

function isLockErrorType(type: Catchable): boolean {
  return typeof type === 'function' && (type === ZkLockError || type.prototype instanceof ZkLockError);
}
