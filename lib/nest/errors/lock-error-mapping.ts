import { HttpException, HttpStatus } from '@nestjs/common';

import {
  FenceStoreError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockOrderError,
  LockReentryError,
  LockTimeoutError,
  LockUnavailableError,
  LockUpgradeError,
  StaleFencingTokenError,
  type ZkLockError,
} from '../../core/errors/errors.js';
import type { ZkLockLogger } from '../lock-logger.js';
import { answeredLine, callerMessage } from './messages.js';

/** The HTTP status a lock error answers with in an HTTP handler; undefined for any other error. */
export function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof LockTimeoutError || error instanceof LockAbortedError) return HttpStatus.LOCKED;
  // The call chain's own locks conflict with what it asked: refused at once instead of waiting forever.
  if (error instanceof LockUpgradeError || error instanceof LockReentryError || error instanceof LockOrderError)
    return HttpStatus.CONFLICT;
  // A fenced store refused the write: a newer holder wrote since this request's lock was
  // granted. The request's work was rolled back; a retry takes the lock afresh.
  if (error instanceof StaleFencingTokenError) return HttpStatus.CONFLICT;
  // Lost, this instance is shutting down, or it has no ZooKeeper session to ask: a retry
  // later (or on another instance) can succeed; nobody was found holding the lock.
  if (
    error instanceof LockLostError ||
    error instanceof LockClientClosedError ||
    error instanceof LockUnavailableError ||
    error instanceof FenceStoreError
  )
    return HttpStatus.SERVICE_UNAVAILABLE;
  return undefined;
}

/**
 * The `Retry-After` (seconds) that goes with a lock error's HTTP answer; undefined when a
 * retry cannot help (409: the call chain's own locks conflict) or for other errors. The
 * holder's remaining time is not known here, so a taken lock says the shortest wait (1 s);
 * so does this instance shutting down (another instance can answer at once). No session
 * to ask, or a lock lost with its session, says 5 s: a client reconnects, or a new session
 * is made, within seconds when ZooKeeper is back.
 */
export function retryAfterOf(error: unknown): number | undefined {
  if (error instanceof LockTimeoutError || error instanceof LockAbortedError || error instanceof LockClientClosedError)
    return 1;
  if (error instanceof LockUnavailableError || error instanceof LockLostError || error instanceof FenceStoreError)
    return 5;
  return undefined;
}

/** Reason phrases, as Nest's own HTTP exceptions write them in `error`. */
const REASONS: Record<number, string> = { 409: 'Conflict', 423: 'Locked', 503: 'Service Unavailable' };

/**
 * The `HttpException` a lock error becomes in HTTP (body `{ statusCode, error, code, message }`,
 * the message the caller's: see `callerMessage`); undefined for others.
 */
export function toHttpException(error: unknown): HttpException | undefined {
  const status = httpStatusOf(error);
  if (status === undefined) return undefined;
  const { code } = error as ZkLockError;
  const message = callerMessage(code, status);
  return new HttpException({ statusCode: status, error: REASONS[status], code, message }, status, { cause: error });
}

/** What an RPC caller receives for a lock error (the same errors as in HTTP): undefined for others. */
export interface RpcLockError {
  readonly status: 'error';
  readonly code: string;
  readonly message: string;
}

export function rpcErrorOf(error: unknown): RpcLockError | undefined {
  const status = httpStatusOf(error);
  if (status === undefined) return undefined;
  const { code } = error as ZkLockError;
  return { status: 'error', code, message: callerMessage(code, status) };
}

/**
 * Logs the full message of a lock error answered to `to` (e.g. `GET /orders/42`, or `RPC`),
 * which the caller was not shown: 423 at `debug` (a lock taken is routine), 409 at `error`
 * (the service's own code asked what it never can) but `warn` for a stale fencing token (a
 * holder that paused or lost its lock, refused as it should be), 503 at `warn`.
 */
export function logAnswered(logger: ZkLockLogger, to: string, error: unknown): void {
  const status = httpStatusOf(error);
  if (status === undefined) return;
  const { code, message } = error as ZkLockError;
  const level =
    status === HttpStatus.LOCKED
      ? 'debug'
      : status === HttpStatus.CONFLICT && !(error instanceof StaleFencingTokenError)
        ? 'error'
        : 'warn';
  logger[level](answeredLine(to, status, code, message));
}

type RpcExceptionClass = new (error: object) => Error;
let rpcException: Promise<RpcExceptionClass> | undefined;

/**
 * Nest's `RpcException`, from the application's `@nestjs/microservices` (an RPC context
 * exists only where it is installed): loaded on the first lock error in an RPC handler,
 * so applications without microservices load nothing of it.
 */
export function loadRpcException(): Promise<RpcExceptionClass> {
  return (rpcException ??= import('@nestjs/microservices').then(
    (microservices) => microservices.RpcException as RpcExceptionClass,
  ));
}
