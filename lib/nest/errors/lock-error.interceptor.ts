import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { catchError, throwError, type Observable } from 'rxjs';
import { loadRpcException, logAnswered, retryAfterOf, rpcErrorOf, toHttpException } from './lock-error-mapping.js';
import { ZkLockLogger } from '../lock-logger.js';
import { ZK_LOCK_RESOLVED_OPTIONS } from '../zk-lock.constants.js';
import type { LockServiceOptions } from '../zk-lock-module.options.js';
import { ZkLockError } from '../../core/errors/errors.js';

/**
 * Turns lock errors into answers, so that users need no filter of their own: in HTTP
 * handlers 423 Locked, 409 Conflict or 503, with `Retry-After` on 423 and 503
 * (`httpErrors`); in RPC handlers (microservices)
 * an `RpcException` carrying `{ status: 'error', code, message }` (`rpcErrors`). An
 * exception filter of the application's own for the error's class (on the handler, its
 * controller, or global) wins: the error then reaches it as it is. Other contexts (cron
 * jobs, WebSockets, plain application contexts) get the domain error untouched.
 */
@Injectable()
export class LockErrorInterceptor implements NestInterceptor {
  /** The caller gets a short message; the error's full one goes here. */
  private readonly logger: ZkLockLogger;

  constructor(
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
    private readonly config: ApplicationConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.logger = new ZkLockLogger(options.logLevels);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType();
    if (type === 'http' && this.options.httpErrors) {
      return next.handle().pipe(catchError((error: unknown) => throwError(() => this.forHttp(error, context))));
    }
    if (type === 'rpc' && this.options.rpcErrors) {
      return next.handle().pipe(catchError((error: unknown) => this.forRpc(error, context)));
    }
    return next.handle();
  }

  private forHttp(error: unknown, context: ExecutionContext): unknown {
    if (hasUserLockFilter(error, context, this.config)) return error;
    const mapped = toHttpException(error);
    if (!mapped) return error;
    const { method, url } = context.switchToHttp().getRequest<{ method?: string; url?: string }>();
    logAnswered(this.logger, `${method} ${url}`, error);
    const retryAfter = retryAfterOf(error);
    // Set on the response now: Nest's exception handler answers with an HttpException's
    // status and body only, and keeps headers already set.
    if (retryAfter !== undefined)
      this.adapterHost.httpAdapter.setHeader(context.switchToHttp().getResponse(), 'Retry-After', String(retryAfter));
    return mapped;
  }

  private async forRpc(error: unknown, context: ExecutionContext): Promise<never> {
    const answer = rpcErrorOf(error);
    if (!answer || hasUserLockFilter(error, context, this.config)) throw error;
    const RpcException = await loadRpcException().catch(() => undefined);
    if (!RpcException) throw error;
    const pattern = context.switchToRpc().getContext<{ getPattern?: () => string } | undefined>()?.getPattern?.();
    logAnswered(this.logger, pattern === undefined ? 'RPC' : `RPC ${pattern}`, error);
    const mapped = new RpcException(answer);
    (mapped as { cause?: unknown }).cause = error;
    throw mapped;
  }
}

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
