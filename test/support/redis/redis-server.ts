import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { installDebianPackage } from '../debian-package';
import { freePort } from '../free-port';
import { encodeCommand, parseReply, RedisReplyError } from './resp';

/** Debian's Redis (`apt-get install redis-server`; `.ci/run` installs it, and `start()` as root). */
const BIN = '/usr/bin/redis-server';
const INSTALL_HINT = "install Debian's redis-server package (`sudo apt-get install -y redis-server`).";
/** How long `start()` waits for the server to answer (or a replica to be in sync), and `command()` for a reply. */
const READY_TIMEOUT_MS = 30_000;
const COMMAND_TIMEOUT_MS = 10_000;

/**
 * What the server keeps over a crash: `none` keeps nothing (`--save "" --appendonly no`,
 * a restart starts empty); `aof-everysec` appends every write to its AOF, fsynced once a
 * second (`--appendonly yes --appendfsync everysec`: a write more than a second old
 * survives a kill -9, a newer one may not).
 */
export type RedisPersistence = 'none' | 'aof-everysec';

export interface RedisServerOptions {
  /** Default `none`. */
  readonly persistence?: RedisPersistence;
  /** `host:port`: start as a replica of that server (also after each restart). */
  readonly replicaOf?: string;
}

/**
 * A throwaway Redis server for the tests and the peers benchmark, never the machine's own
 * service: Debian's `redis-server` in the foreground, listening on a free loopback port,
 * with its data, AOF and log in a temporary folder. `kill()` crashes it (kill -9 by
 * default) keeping the folder, `restart()` brings it back on the same port and folder,
 * `destroy()` kills it and deletes the folder.
 */
export class RedisServer {
  /** Its temporary folder: data, AOF (`appendonlydir/`) and log (`redis.log`). */
  readonly dir = mkdtempSync(join(tmpdir(), 'zk-lock-redis-'));
  private readonly persistence: RedisPersistence;
  private readonly replicaOf: { host: string; port: string } | undefined;
  private process: ChildProcess | undefined;
  /** Resolves when the current process has exited. */
  private exited: Promise<void> = Promise.resolve();
  private portNumber = 0;
  private destroyed = false;

  constructor(options: RedisServerOptions = {}) {
    this.persistence = options.persistence ?? 'none';
    if (options.replicaOf !== undefined) {
      const match = /^(.+):(\d+)$/.exec(options.replicaOf);
      if (!match) throw new Error(`replicaOf must be "host:port", got "${options.replicaOf}".`);
      this.replicaOf = { host: match[1], port: match[2] };
    }
  }

  /** Its port: 0 until the first `start()`, then the same for good. */
  get port(): number {
    return this.portNumber;
  }

  /** `127.0.0.1:<port>`, as the peers' configs name a Redis server. */
  get endpoint(): string {
    return `127.0.0.1:${this.portNumber}`;
  }

  /** The running server's process id; undefined when it is not running. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  private get logFile(): string {
    return join(this.dir, 'redis.log');
  }

  /**
   * Starts the server (on a free port the first time, the same port after) and resolves
   * once it answers PING, and for a replica once it is in sync with its primary
   * (`master_link_status:up`).
   */
  async start(): Promise<void> {
    if (this.destroyed) throw new Error(`This Redis server was destroyed (its folder ${this.dir} is gone).`);
    if (this.process) throw new Error(`Redis is already running (pid ${this.process.pid}) on ${this.endpoint}.`);
    if (!existsSync(BIN)) installDebianPackage('redis-server', BIN, `No ${BIN}: ${INSTALL_HINT}`);
    const first = this.portNumber === 0;
    // A port found free may be taken before the server binds it: the first start then tries another.
    for (let attempt = 1; ; attempt++) {
      if (first) this.portNumber = await freePort();
      try {
        this.spawn();
        await this.waitReady();
        return;
      } catch (error) {
        await this.kill();
        if (!(first && attempt < 3 && this.log().includes('Address already in use'))) throw error;
      }
    }
  }

  private spawn(): void {
    const args = [
      '--port',
      String(this.portNumber),
      '--bind',
      '127.0.0.1',
      '--protected-mode',
      'no',
      '--daemonize',
      'no',
      '--dir',
      this.dir,
      '--logfile',
      this.logFile,
      '--save',
      '',
      // A primary sends a new replica its data at once, not after the default 5 s wait for more replicas.
      '--repl-diskless-sync-delay',
      '0',
      ...(this.persistence === 'aof-everysec'
        ? ['--appendonly', 'yes', '--appendfsync', 'everysec']
        : ['--appendonly', 'no']),
      ...(this.replicaOf ? ['--replicaof', this.replicaOf.host, this.replicaOf.port] : []),
    ];
    // What it prints before its log file is open (a bad argument) goes to the same file.
    const log = openSync(this.logFile, 'a');
    const child = spawn(BIN, args, { cwd: this.dir, stdio: ['ignore', log, log] });
    closeSync(log);
    this.process = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        if (this.process === child) this.process = undefined;
        resolve();
      });
    });
  }

  private log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  private async waitReady(): Promise<void> {
    const until = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (!this.process) throw new Error(`redis-server exited at start; see ${this.logFile}:\n${this.log()}`);
      if (await this.ready().catch(() => false)) return;
      if (Date.now() > until)
        throw new Error(
          `Redis on ${this.endpoint} not ready after ${READY_TIMEOUT_MS} ms` +
            `${this.replicaOf ? ' (a replica waits to be in sync with its primary)' : ''}; see ${this.logFile}.`,
        );
      await sleep(25);
    }
  }

  private async ready(): Promise<boolean> {
    if ((await this.command('PING')) !== 'PONG') return false;
    if (!this.replicaOf) return true;
    return (await this.command('INFO', 'replication')).includes('master_link_status:up');
  }

  /**
   * Sends `signal` (default SIGKILL: a crash) and resolves once the process is gone; the
   * folder stays, for `restart()`. Does nothing when it is not running.
   */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child) return;
    child.kill(signal);
    await this.exited;
  }

  /**
   * Kills it if it runs (a crash), then starts it again on the same port and folder, with
   * the options it was made with: with `aof-everysec` it reloads its AOF.
   */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /**
   * Sends one command on a fresh connection and resolves with its reply as text: a status
   * or bulk string as is, an integer in decimal, a nil as `(nil)`, an array's elements one
   * a line. Rejects with `RedisReplyError` on an error reply.
   */
  command(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.portNumber, '127.0.0.1');
      let received = Buffer.alloc(0);
      const finish = (settle: () => void): void => {
        socket.destroy();
        settle();
      };
      socket.setTimeout(COMMAND_TIMEOUT_MS, () =>
        finish(() =>
          reject(new Error(`Redis on ${this.endpoint} did not answer ${args[0]} within ${COMMAND_TIMEOUT_MS} ms.`)),
        ),
      );
      socket.on('error', (error) => finish(() => reject(error)));
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        let reply;
        try {
          reply = parseReply(received);
        } catch (error) {
          finish(() => reject(error as Error));
          return;
        }
        if (reply === undefined) return; // not all of it yet
        finish(() => (reply instanceof RedisReplyError ? reject(reply) : resolve(reply)));
      });
      socket.on('close', () =>
        finish(() => reject(new Error(`Redis on ${this.endpoint} closed the connection before answering ${args[0]}.`))),
      );
      socket.write(encodeCommand(args));
    });
  }

  /** Kills it and deletes its folder; safe to call twice, or when it never started. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
