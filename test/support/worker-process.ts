import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { processState } from './process-state';
import { waitFor } from './wait-for';

const ROOT = join(__dirname, '..', '..');

export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A long-running test worker (TypeScript under `test/workers/`, in its own Node process)
 * that the test talks to with signals and watches through its stdout, one line per event.
 * Unlike `runWorker` it can be killed, stopped and resumed while it runs.
 */
export class WorkerProcess {
  /** Every complete stdout line so far, in order. */
  readonly lines: string[] = [];
  readonly exited: Promise<WorkerExit>;
  private readonly child: ChildProcess;
  private partial = '';
  private stderr = '';
  private exit: WorkerExit | undefined;
  private readonly listeners = new Set<(line: string) => void>();

  private constructor(
    readonly worker: string,
    args: unknown,
  ) {
    this.child = spawn(
      process.execPath,
      ['-r', join(ROOT, 'scripts', 'ts-register.cjs'), join(ROOT, 'test', 'workers', worker), JSON.stringify(args)],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  static spawn(worker: string, args: unknown): WorkerProcess {
    return new WorkerProcess(worker, args);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** True until the process has exited and its output is read to the end. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /** What the worker wrote to stderr so far (its crash report, if any). */
  get errors(): string {
    return this.stderr;
  }

  /** Calls `listener` with every line from now on. */
  onLine(listener: (line: string) => void): void {
    this.listeners.add(listener);
  }

  /** The first line (already seen or still to come) that `match` accepts. */
  async line(match: (line: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
    return waitFor(
      () => {
        const found = this.lines.find(match);
        if (found !== undefined) return found;
        if (!this.running)
          throw new Error(
            `${this.worker} exited (${JSON.stringify(this.exit)}) before printing ${what}; stderr: ${this.stderr}`,
          );
        return undefined;
      },
      { timeoutMs, intervalMs: 5, what: `${this.worker} to print ${what}` },
    );
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** SIGKILL (a crash), and waits until the process is gone. */
  async kill(): Promise<WorkerExit> {
    this.signal('SIGCONT'); // a stopped process dies of SIGKILL too, but let it be reaped at once
    this.signal('SIGKILL');
    return this.exited;
  }

  /**
   * The process's scheduler state from /proc (`S` sleeping, `R` running, `T` stopped...),
   * or undefined once it is gone.
   */
  state(): string | undefined {
    return processState(this.pid);
  }

  /**
   * What the main thread is doing, from /proc/<pid>/syscall: the number of the system call
   * it is blocked in, `'user'` when it is running (or was stopped in) its own code, or
   * `'unreadable'` when the kernel does not say.
   */
  blockedInSyscall(): number | 'user' | 'unreadable' {
    try {
      const first = readFileSync(`/proc/${this.pid}/syscall`, 'utf8').trim().split(' ')[0];
      return /^\d+$/.test(first) ? Number(first) : 'user';
    } catch {
      return 'unreadable';
    }
  }

  private onStdout(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      this.lines.push(line);
      for (const listener of this.listeners) listener(line);
    }
  }
}
