import {
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';

import { LockAbortedError } from '../core/errors/lock-aborted.error.js';
import { LockClientClosedError } from '../core/errors/lock-client-closed.error.js';
import { LockLostError } from '../core/errors/lock-lost.error.js';
import { LockTimeoutError } from '../core/errors/lock-timeout.error.js';
import { LockReentryError } from '../core/errors/lock-reentry.error.js';
import { LockUpgradeError } from '../core/errors/lock-upgrade.error.js';
import type { ZkLockError } from '../core/errors/zk-lock.error.js';
import { ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

/** The HTTP status a lock error answers with in an HTTP handler. */
export function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof LockTimeoutError || error instanceof LockAbortedError) return HttpStatus.LOCKED;
  if (error instanceof LockUpgradeError || error instanceof LockReentryError) return HttpStatus.CONFLICT;
  // Lost, or this instance is shutting down: another instance can serve a retry.
  if (error instanceof LockLostError || error instanceof LockClientClosedError) return HttpStatus.SERVICE_UNAVAILABLE;
  return undefined;
}

/**
 * Turns lock errors thrown by HTTP handlers into HTTP answers (423 Locked, 409, 503), so
 * users need no filter of their own (a wait cut short by shutdown answers 503). Other contexts (cron jobs, microservices, plain
 * application contexts) get the domain error untouched.
 */
@Injectable()
export class LockHttpErrorInterceptor implements NestInterceptor {
  constructor(@Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.options.httpErrors || context.getType() !== 'http') return next.handle();
    return next.handle().pipe(catchError((error: unknown) => throwError(() => toHttpException(error))));
  }
}

/** Reason phrases, as Nest's own HTTP exceptions write them in `error`. */
const REASONS: Record<number, string> = { 409: 'Conflict', 423: 'Locked', 503: 'Service Unavailable' };

function toHttpException(error: unknown): unknown {
  const status = httpStatusOf(error);
  if (status === undefined) return error;
  const { message, code } = error as ZkLockError;
  return new HttpException({ statusCode: status, error: REASONS[status], code, message }, status, { cause: error });
}
