import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

import { processState } from '../../test/support/process-state.js';
import { BUILT_MAIN, ROOT, SOURCE_MAIN, TS_REGISTER } from './sample-app.paths.js';

export interface SampleAppSettings {
  readonly zkConnect: string;
  readonly storeDir: string;
  readonly instance: string;
  /** `built` runs `nest build`'s output; `source` runs the TypeScript directly. Default `built`. */
  readonly entry?: 'built' | 'source';
  /** More environment for the instance, e.g. `STORE_DELAY_MS`. */
  readonly env?: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One sample-app instance in a process of its own, on a free port of 127.0.0.1. */
export class SampleAppProcess {
  private log = '';
  readonly exited: Promise<Exit>;
  private port: number | undefined;

  private constructor(
    readonly instance: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.log += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.log += chunk));
    // 'close' rather than 'exit': by then the output is read to the end.
    this.exited = once(child, 'close').then(([code, signal]) => ({ code, signal }) as Exit);
  }

  /** Starts the instance and resolves once it prints `listening <port>`. */
  static async start(settings: SampleAppSettings): Promise<SampleAppProcess> {
    const args = settings.entry === 'source' ? ['-r', TS_REGISTER, SOURCE_MAIN] : [BUILT_MAIN];
    const { zkConnect: ZK_CONNECT, storeDir: STORE_DIR, instance: INSTANCE } = settings;
    const env = { ...process.env, ZK_CONNECT, STORE_DIR, INSTANCE, PORT: '0', HOST: '127.0.0.1', ...settings.env };
    const app = new SampleAppProcess(
      settings.instance,
      spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    try {
      app.port = await app.listening(settings.startTimeoutMs ?? 30_000);
    } catch (error) {
      await app.stop();
      throw error;
    }
    return app;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process is stopped (SIGSTOP), from its state in /proc. */
  get stopped(): boolean {
    return processState(this.child.pid) === 'T';
  }

  /** Sends `signal` to the process, unless it has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Everything the instance printed so far. */
  get output(): string {
    return this.log;
  }

  /** SIGTERM (graceful shutdown), SIGKILL if it has not exited after `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<Exit> {
    this.signal('SIGCONT'); // a stopped process would not act on SIGTERM
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private listening(timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const fail = (why: string): void =>
        reject(new Error(`sample-app ${this.instance} ${why}; its output:\n${this.log}`));
      const timer = setTimeout(() => fail(`printed no "listening <port>" within ${timeoutMs} ms`), timeoutMs);
      const onData = (): void => {
        const port = /^listening (\d+)$/m.exec(this.log)?.[1];
        if (!port) return;
        clearTimeout(timer);
        this.child.stdout!.off('data', onData);
        resolve(Number(port));
      };
      this.child.stdout!.on('data', onData);
      void this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        fail(`exited (code ${code}, signal ${signal}) before listening`);
      });
    });
  }
}
