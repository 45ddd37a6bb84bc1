import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

import type { ReadyLine, WorkerOp } from '../workers/impl.protocol.js';

interface Pending {
  readonly op: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export interface WorkerSpawn {
  /** For messages: "ours#1", "kazoo#2"… */
  readonly label: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** How long the worker may take to print its ready line. */
  readonly readyTimeoutMs?: number;
}

/**
 * One implementation's worker process, driven by JSON lines (see impl.protocol.ts).
 * Requests may overlap (each carries an id); a crashed worker fails what is pending with
 * the end of its stderr.
 */
export class WorkerChannel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderr = '';
  private exited = false;
  private readonly exit: Promise<void>;
  private onReady: ((line: ReadyLine) => void) | undefined;

  private constructor(
    readonly label: string,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-8_000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    this.exit = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.exited = true;
        this.failAll(new Error(`${label} exited (${signal ?? code}); stderr: ${this.stderr.trim() || '(empty)'}`));
        resolve();
      }),
    );
  }

  /** Starts the worker and waits for its ready line. */
  static async start(spec: WorkerSpawn): Promise<{ channel: WorkerChannel; ready: ReadyLine }> {
    const child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, stdio: 'pipe' });
    const channel = new WorkerChannel(spec.label, child);
    const timeoutMs = spec.readyTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const ready = await Promise.race([
        new Promise<ReadyLine>((resolve) => (channel.onReady = resolve)),
        channel.exit.then(() =>
          Promise.reject(new Error(`${spec.label} exited before it was ready; stderr: ${channel.stderr.trim()}`)),
        ),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${spec.label} not ready after ${timeoutMs} ms; stderr: ${channel.stderr.trim()}`)),
            timeoutMs,
          );
        }),
      ]);
      return { channel, ready };
    } catch (error) {
      await channel.kill();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  request<T>(op: WorkerOp, params: object = {}, timeoutMs = 180_000): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.label} has exited; stderr: ${this.stderr.trim()}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: ${op} got no answer within ${timeoutMs} ms; stderr: ${this.stderr.trim()}`));
      }, timeoutMs);
      this.pending.set(id, { op, resolve: resolve as (value: unknown) => void, reject, timer });
      this.child.stdin.write(JSON.stringify({ id, op, params }) + '\n');
    });
  }

  /** Asks the worker to close its sessions and exit; kills it if it does not within `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.exited) return;
    this.child.stdin.end(JSON.stringify({ id: 0, op: 'quit', params: {} }) + '\n');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([this.exit, late]);
    clearTimeout(timer);
    if (outcome === 'late') await this.kill();
  }

  async kill(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.exit;
  }

  private onLine(line: string): void {
    let message: { id?: number; result?: unknown; error?: string; ready?: boolean };
    try {
      message = JSON.parse(line);
    } catch {
      this.stderr = (this.stderr + `\n[stdout] ${line}`).slice(-8_000); // stray output: keep it for errors
      return;
    }
    if (message.ready) {
      this.onReady?.(message as ReadyLine);
      return;
    }
    const pending = message.id === undefined ? undefined : this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id!);
    clearTimeout(pending.timer);
    if (message.error !== undefined) pending.reject(new Error(`${this.label}: ${pending.op} failed: ${message.error}`));
    else pending.resolve(message.result);
  }

  private failAll(error: Error): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.pending.delete(id);
    }
  }
}
