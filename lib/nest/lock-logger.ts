import { Logger, type LogLevel } from '@nestjs/common';

/** Nest's log levels: the default of `logLevels`, every one (the application's logger decides). */
export const LOG_LEVELS: readonly LogLevel[] = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'];

type Level = 'verbose' | 'debug' | 'log' | 'warn' | 'error';

/**
 * The library's lines through Nest's `Logger` (context `ZkLock`), at the levels the
 * module's `logLevels` lets through: Nest's own levels apply to the whole application,
 * and this library's routine lines are not every application's concern.
 */
export class ZkLockLogger {
  private readonly logger = new Logger('ZkLock');
  private readonly levels: ReadonlySet<LogLevel>;

  constructor(levels: readonly LogLevel[] = LOG_LEVELS) {
    this.levels = new Set(levels);
  }

  verbose = (message: string): void => this.write('verbose', message);
  debug = (message: string): void => this.write('debug', message);
  log = (message: string): void => this.write('log', message);
  warn = (message: string): void => this.write('warn', message);
  error = (message: string): void => this.write('error', message);

  private write(level: Level, message: string): void {
    if (this.levels.has(level)) this.logger[level](message);
  }
}

const byService = new WeakMap<object, ZkLockLogger>();
const everyLevel = new ZkLockLogger();

/** Notes the logger of a `LockService`, for the decorators that find that service at call time. */
export function setLoggerOf(lockService: object, logger: ZkLockLogger): void {
  byService.set(lockService, logger);
}

/** The logger of `lockService`'s module; every level for a service of none (a mock). */
export function loggerOf(lockService: object): ZkLockLogger {
  return byService.get(lockService) ?? everyLevel;
}
