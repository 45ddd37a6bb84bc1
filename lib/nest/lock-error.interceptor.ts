import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ApplicationConfig } from '@nestjs/core';
import { catchError, throwError, type Observable } from 'rxjs';

import { loadRpcException, rpcErrorOf, toHttpException } from './lock-error.mapping.js';
import { hasUserLockFilter } from './user-lock-filters.js';
import { ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

export { httpStatusOf } from './lock-error.mapping.js';

/**
 * Turns lock errors into answers, so that users need no filter of their own: in HTTP
 * handlers 423 Locked, 409 Conflict or 503 (`httpErrors`); in RPC handlers (microservices)
 * an `RpcException` carrying `{ status: 'error', code, message }` (`rpcErrors`). An
 * exception filter of the application's own for the error's class (on the handler, its
 * controller, or global) wins: the error then reaches it as it is. Other contexts (cron
 * jobs, WebSockets, plain application contexts) get the domain error untouched.
 */
@Injectable()
export class LockErrorInterceptor implements NestInterceptor {
  constructor(
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
    private readonly config: ApplicationConfig,
  ) {}

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
    return toHttpException(error) ?? error;
  }

  private async forRpc(error: unknown, context: ExecutionContext): Promise<never> {
    const answer = rpcErrorOf(error);
    if (!answer || hasUserLockFilter(error, context, this.config)) throw error;
    const RpcException = await loadRpcException().catch(() => undefined);
    if (!RpcException) throw error;
    const mapped = new RpcException(answer);
    (mapped as { cause?: unknown }).cause = error;
    throw mapped;
  }
}

/** @deprecated The former name of `LockErrorInterceptor` (it now maps RPC errors too). */
export const LockHttpErrorInterceptor = LockErrorInterceptor;
