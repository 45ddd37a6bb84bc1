import type { LoggerService } from '@nestjs/common';

import { waitUntil } from './wait-until';

type Line = [level: string, message: string];

/** Nest's logger, replaced by one that keeps the ZkLock lines. */
export class CapturedLog implements LoggerService {
  readonly lines: Line[] = [];
  log = (message: string, context?: string): void => this.keep('log', message, context);
  warn = (message: string, context?: string): void => this.keep('warn', message, context);
  error = (message: string, _trace?: string, context?: string): void => this.keep('error', message, context);
  debug = (message: string, context?: string): void => this.keep('debug', message, context);
  verbose = (message: string, context?: string): void => this.keep('verbose', message, context);
  private keep(level: string, message: string, context?: string): void {
    if (context === 'ZkLock') this.lines.push([level, message]);
  }
  /** Waits for a line of `level` matching `pattern` after the first `from` lines. */
  async next(level: string, pattern: RegExp, from: number): Promise<string> {
    await waitUntil(
      () => this.lines.slice(from).some(([l, m]) => l === level && pattern.test(m)),
      `a ${level} line ${pattern}`,
    );
    return this.lines.slice(from).find(([l, m]) => l === level && pattern.test(m))![1];
  }
  /** The messages of `level` matching `pattern`. */
  matching(level: string, pattern: RegExp): string[] {
    return this.lines.filter(([l, m]) => l === level && pattern.test(m)).map(([, m]) => m);
  }
}
