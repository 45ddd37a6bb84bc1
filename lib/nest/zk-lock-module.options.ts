import type { LogLevel } from '@nestjs/common';

import { InvalidOptionError } from '../core/errors/errors.js';
import {
  resolveZkLockOptions,
  type ResolvedZkLockOptions,
  type ZkLockOptions,
} from '../core/zookeeper/zk-lock-options.js';
import { resolveMaxHoldMs, wholeMilliseconds } from '../core/port/options.js';
import { LOG_LEVELS } from './lock-logger.js';

export interface ZkLockModuleOptions extends ZkLockOptions {
  /**
   * How long `LockService` calls and `@WithLock` methods wait for a lock when the call
   * names no `timeoutMs`. Default: twice the session timeout the server granted (20 s at
   * the default 10 s session), so that a waiter outlasts the session of a holder whose
   * process died (docs/guide.md, "When a holder crashes"); any number of milliseconds >= 0,
   * however large; `Infinity` waits as long as it takes.
   */
  readonly acquireTimeoutMs?: number;
  /**
   * In HTTP handlers, answer lock failures with a status instead of a 500:
   * `LockTimeoutError`/`LockAbortedError` 423 Locked, `LockUpgradeError` 409 Conflict,
   * `LockLostError` and `LockClientClosedError` (shutting down) 503, with `Retry-After` on
   * 423 and 503; the body's `message` is written for the caller, the error's own goes to
   * the log. Default `true`. An
   * exception filter of the application's own for the error's class wins (it gets the plain error).
   */
  readonly httpErrors?: boolean;
  /**
   * In RPC handlers (`@nestjs/microservices`), the same errors reach the caller as
   * `{ status: 'error', code, message }` (an `RpcException`) instead of Nest's
   * "Internal server error". Default `true`; a filter of the application's own wins, as in HTTP.
   */
  readonly rpcErrors?: boolean;
  /**
   * At application shutdown, how long `withLock` bodies and `@WithLock` methods still
   * running may take to finish, counted from the moment shutdown began (new lock calls are
   * refused from then on), before their locks are released under them (their signal
   * aborts with a `LockLostError` first, and the call rejects with it). Default 10 000 ms;
   * any whole number of milliseconds up to `Number.MAX_SAFE_INTEGER`.
   */
  readonly shutdownGraceMs?: number;
  /**
   * The default `maxHoldMs` of `LockService` calls and `@WithLock`/`@WithLease` methods
   * that name none: past it a holder that hangs is told (its signal aborts, a warning is
   * logged) and the lock is released for another instance. Default: no limit; any whole
   * number of milliseconds >= 1. A call's own `maxHoldMs` wins.
   */
  readonly maxHoldMs?: number;
  /**
   * The levels at which this library writes to Nest's logger (context `ZkLock`), e.g.
   * `['warn', 'error']`; `[]` silences it. Default: every level, leaving the choice to the
   * application's logger, whose own levels still apply.
   */
  readonly logLevels?: readonly LogLevel[];
}

/** What `LockService` and the interceptors read of the module's options, whatever the backend. */
export interface LockServiceOptions {
  /** `undefined`: `defaultAcquireTimeoutMs` of the session timeout, read at each call. */
  readonly acquireTimeoutMs?: number;
  readonly httpErrors: boolean;
  readonly rpcErrors: boolean;
  readonly shutdownGraceMs: number;
  /** `undefined`: no limit. */
  readonly maxHoldMs?: number;
  readonly logLevels: readonly LogLevel[];
}

export interface ResolvedZkLockModuleOptions extends ResolvedZkLockOptions, LockServiceOptions {}

const ZK_LOCK_MODULE_DEFAULTS = Object.freeze({
  httpErrors: true,
  rpcErrors: true,
  shutdownGraceMs: 10_000,
});

/**
 * `acquireTimeoutMs` when the options name none, for a session timeout `sessionTimeoutMs`
 * (the one the server granted; before the first connect, the one asked for). A holder
 * whose process dies keeps its lock until the server expires its session: the timeout
 * counted from its last touch, rounded up to the server's next tick, and the server
 * grants no timeout under 2 × tickTime, so a tick is at most half the timeout. A waiter
 * that was already queued at the crash is then granted within 1.5 × the timeout and a
 * notification; the other half timeout is the margin for the notification and the grant.
 */
export function defaultAcquireTimeoutMs(sessionTimeoutMs: number): number {
  return 2 * sessionTimeoutMs;
}

/** The one place defaults are merged and options checked, for `forRoot` and `forRootAsync` alike. */
export function resolveModuleOptions(options: ZkLockModuleOptions): ResolvedZkLockModuleOptions {
  return {
    ...resolveZkLockOptions(options, 'ZkLockModule.forRoot', SERVICE_OPTION_KEYS),
    ...resolveServiceOptions(options),
  };
}

/** The module's own options, beside the core's (`isGlobal` is forRoot's, and reaches the options too). */
const SERVICE_OPTION_KEYS: readonly string[] = [
  'acquireTimeoutMs',
  'httpErrors',
  'rpcErrors',
  'shutdownGraceMs',
  'maxHoldMs',
  'logLevels',
  'isGlobal',
];

/** `LockService`'s options, with their defaults, for every variant of the module (`forTesting` too). */
export function resolveServiceOptions(options: Partial<LockServiceOptions>): LockServiceOptions {
  const {
    acquireTimeoutMs,
    httpErrors = ZK_LOCK_MODULE_DEFAULTS.httpErrors,
    rpcErrors = ZK_LOCK_MODULE_DEFAULTS.rpcErrors,
    shutdownGraceMs = ZK_LOCK_MODULE_DEFAULTS.shutdownGraceMs,
  } = options;
  if (
    acquireTimeoutMs !== undefined &&
    (typeof acquireTimeoutMs !== 'number' || Number.isNaN(acquireTimeoutMs) || acquireTimeoutMs < 0)
  ) {
    throw new InvalidOptionError(
      'acquireTimeoutMs',
      acquireTimeoutMs,
      'a number of milliseconds >= 0 (Infinity = wait forever)',
    );
  }
  if (typeof httpErrors !== 'boolean') throw new InvalidOptionError('httpErrors', httpErrors, 'true or false');
  if (typeof rpcErrors !== 'boolean') throw new InvalidOptionError('rpcErrors', rpcErrors, 'true or false');
  const { logLevels = LOG_LEVELS } = options;
  if (!Array.isArray(logLevels) || !logLevels.every((level) => LOG_LEVELS.includes(level)))
    throw new InvalidOptionError(
      'logLevels',
      logLevels,
      `an array of Nest's log levels (${LOG_LEVELS.join(', ')}); [] for none`,
    );
  const maxHoldMs = resolveMaxHoldMs(options.maxHoldMs);
  return {
    ...(acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs }),
    httpErrors,
    rpcErrors,
    shutdownGraceMs: wholeMilliseconds('shutdownGraceMs', shutdownGraceMs, 0),
    logLevels: [...logLevels],
    ...(maxHoldMs === undefined ? {} : { maxHoldMs }),
  };
}
