import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import type {
  HoldCommand,
  HoldEvent,
  LoopCommand,
  LoopDone,
  PeerCommand,
  PeerWorkerArgs,
  PeerWorkerMessage,
} from './peer-worker.protocol.js';

const ROOT = join(__dirname, '..', '..');
const WORKER = join(__dirname, 'peer.worker.ts');
/** How long a worker may take to open its lock and say `ready`. */
const READY_TIMEOUT_MS = 30_000;
/** How long `close()` lets a worker close and exit before killing it. */
const CLOSE_TIMEOUT_MS = 5_000;

/** How a worker process ended. */
export interface PeerWorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A worker that exited or failed (`fatal`) while the parent waited for an answer. */
export class PeerWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PeerWorkerError';
  }
}

/** A command as the caller gives it: its `cmd` may be left out. */
type Without<C extends { cmd: string }> = Omit<C, 'cmd'> & { readonly cmd?: C['cmd'] };

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The parent's handle on one peer worker (bench/peers/peer.worker.ts): one client of one
 * compared lock in a process of its own, which the fault trials can stop or kill.
 * `loop` and `hold` send the protocol's commands and resolve with their answers; one of
 * each at a time. When the worker dies or reports `fatal`, what waits is rejected with a
 * `PeerWorkerError` carrying the end of its stderr.
 *
 * For `hold`, the parent first makes the fence's table (`PgFence.install()`) and the data
 * table, `CREATE TABLE <dataTable> (id text PRIMARY KEY, n int NOT NULL DEFAULT 0, last
 * text)`, with the rows `<key>:fenced` and `<key>:unfenced`; the worker only UPDATEs them
 * (`n = n + 1, last = <holder>`).
 */
export class PeerWorker {
  /** Resolves when the process has exited. */
  readonly exited: Promise<PeerWorkerExit>;
  private exit: PeerWorkerExit | undefined;
  private fatalError: string | undefined;
  private stderr = '';
  private looping: Waiter<LoopDone> | undefined;
  private holding: (Waiter<HoldEvent[]> & { readonly events: HoldEvent[]; onEvent(e: HoldEvent): void }) | undefined;
  private onReady: Waiter<number> | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly label: string,
  ) {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-8_000);
    });
    child.on('message', (message: PeerWorkerMessage) => this.onMessage(message));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.failAll(`exited (${signal ?? `code ${code}`})`);
        resolve(this.exit);
      }),
    );
  }

  /** Forks a worker for `args.peer` and resolves once it has opened its lock (`ready`). */
  static async start(args: PeerWorkerArgs): Promise<PeerWorker> {
    const child = fork(WORKER, [JSON.stringify(args)], {
      cwd: ROOT,
      execArgv: ['-r', join(ROOT, 'scripts', 'ts-register.cjs')],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const worker = new PeerWorker(child, `${args.peer.id} worker`);
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<number>((resolve, reject) => {
        worker.onReady = { resolve, reject };
        timer = setTimeout(
          () => reject(new PeerWorkerError(`${worker.label} not ready after ${READY_TIMEOUT_MS} ms${worker.tail()}`)),
          READY_TIMEOUT_MS,
        );
      });
      return worker;
    } catch (error) {
      await worker.close();
      throw error;
    } finally {
      clearTimeout(timer);
      worker.onReady = undefined;
    }
  }

  /** The worker's process id (for SIGSTOP and the like). */
  get pid(): number {
    return this.child.pid!;
  }

  /** Runs a `loop` and resolves with its `loop-done`. */
  loop(command: Without<LoopCommand>): Promise<LoopDone> {
    if (this.looping) return Promise.reject(new PeerWorkerError(`${this.label} already runs a loop.`));
    return new Promise((resolve, reject) => {
      this.looping = { resolve, reject };
      this.send({ ...command, cmd: 'loop' });
    });
  }

  /** Runs a `hold`, calling `onEvent` with each event as it comes; resolves at `hold-done` with them all. */
  hold(command: Without<HoldCommand>, onEvent: (event: HoldEvent) => void = () => undefined): Promise<HoldEvent[]> {
    if (this.holding) return Promise.reject(new PeerWorkerError(`${this.label} already runs a hold.`));
    return new Promise((resolve, reject) => {
      this.holding = { resolve, reject, events: [], onEvent };
      this.send({ ...command, cmd: 'hold' });
    });
  }

  /** Sends `signal` (SIGKILL by default; SIGSTOP and SIGCONT pause and resume it). Does nothing once it has exited. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.exit) this.child.kill(signal);
  }

  /**
   * Asks the worker to close its lock and exit, and resolves with how it exited: killed
   * (SIGKILL) if it has not within 5 s, as a stopped (SIGSTOP) one cannot.
   */
  async close(): Promise<PeerWorkerExit> {
    if (this.exit) return this.exit;
    if (this.child.connected) this.send({ cmd: 'close' });
    const timer = setTimeout(() => this.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private send(command: PeerCommand): void {
    this.child.send(command, (error) => {
      if (error) this.failAll(`could not be sent "${command.cmd}": ${error.message}`);
    });
  }

  private onMessage(message: PeerWorkerMessage): void {
    switch (message.type) {
      case 'ready':
        this.onReady?.resolve(message.pid);
        return;
      case 'loop-done': {
        const waiter = this.looping;
        this.looping = undefined;
        waiter?.resolve(message);
        return;
      }
      case 'fatal':
        this.fatalError = message.error;
        this.failAll('failed');
        return;
      case 'closed':
        return;
      default: {
        const holding = this.holding;
        if (!holding) return;
        holding.events.push(message);
        holding.onEvent(message);
        if (message.type === 'hold-done') {
          this.holding = undefined;
          holding.resolve(holding.events);
        }
      }
    }
  }

  /** ": <fatal error>" or the end of stderr, for error messages. */
  private tail(): string {
    const said = this.fatalError ?? this.stderr.trim();
    return said ? `: ${said.slice(-2_000)}` : '';
  }

  private failAll(what: string): void {
    const error = new PeerWorkerError(`${this.label} ${what}${this.tail()}`);
    const waiters = [this.onReady, this.looping, this.holding];
    this.onReady = this.looping = this.holding = undefined;
    for (const waiter of waiters) waiter?.reject(error);
  }
}
