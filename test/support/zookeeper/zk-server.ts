import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort } from '../free-port';
import { fourLetter } from './four-letter';
import { zookeeperClasspath } from './zk-install';

export interface ZkServerConfig {
  tickTime?: number;
  /** Ticks a follower may lag (or stay silent) before leader and follower give up on each other; default 10. */
  syncLimit?: number;
  /** Ticks a follower may take to connect and sync to a new leader; default 20. */
  initLimit?: number;
  forceSync?: boolean;
  /**
   * For ensembles: this server's id and its `server.N=` lines, usually shared by all; a
   * server may get lines of its own that name proxies in place of its peers.
   */
  myid?: number;
  peers?: string[];
  dataDir?: string;
  clientPort?: number;
  /** Further `zoo.cfg` lines (`peerType=observer`, `observerMasterPort=…`, `minSessionTimeout=…`). */
  extraConfig?: readonly string[];
  /** The four-letter words the server answers; default: those the harness reads. */
  fourLetterWords?: readonly string[];
  /** JVM options before the class path; default: a small heap and quick start-up (C1 only) for tests. */
  jvmArgs?: readonly string[];
}

const HARNESS_WORDS = ['srvr', 'mntr', 'ruok', 'stat', 'cons', 'wchs', 'wchc', 'dump'];
const TEST_JVM_ARGS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/**
 * One ZooKeeper server process on 127.0.0.1 with its own data dir and free port, for
 * tests and benchmarks. `stop` kills it (SIGKILL by default: a crash); `start` again
 * reuses port and data, so sessions survive a restart as they do in production.
 */
export class ZkServer {
  private process: ChildProcess | undefined;
  readonly dataDir: string;
  private port = 0;
  private readonly ownsDataDir: boolean;

  constructor(private readonly config: ZkServerConfig = {}) {
    this.ownsDataDir = !config.dataDir;
    this.dataDir = config.dataDir ?? mkdtempSync(join(tmpdir(), 'zk-lock-test-'));
  }

  get clientPort(): number {
    return this.port;
  }

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  async start(waitReady = true): Promise<void> {
    if (this.process) return;
    this.port ||= this.config.clientPort ?? (await freePort());
    const cfg = this.writeConfig();
    const log = openSync(join(this.dataDir, 'server.log'), 'a');
    this.process = spawn(
      'java',
      [
        ...(this.config.jvmArgs ?? TEST_JVM_ARGS),
        '-Dzookeeper.admin.enableServer=false',
        '-cp',
        zookeeperClasspath(),
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        cfg,
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    const child = this.process;
    child.once('exit', () => {
      if (this.process === child) this.process = undefined;
    });
    if (waitReady) await this.waitServing();
  }

  /** Waits until the server tells its mode (it serves clients then). */
  async waitServing(timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const mode = await this.askMode(500);
      if (mode) return mode;
      if (!this.process) throw new Error(`ZooKeeper on port ${this.port} exited; see ${this.dataDir}/server.log`);
      if (Date.now() > until)
        throw new Error(
          `ZooKeeper on port ${this.port} not serving after ${timeoutMs} ms; see ${this.dataDir}/server.log`,
        );
      await sleep(50);
    }
  }

  /** `leader`, `follower`, `observer` or `standalone`, or undefined when not serving. */
  mode(): Promise<string | undefined> {
    return this.askMode(1000);
  }

  /** From `srvr`, or from `mntr` when the server is not to answer `srvr`. */
  private async askMode(timeoutMs: number): Promise<string | undefined> {
    const bySrvr = this.words.includes('srvr');
    const reply = await fourLetter(this.port, bySrvr ? 'srvr' : 'mntr', timeoutMs).catch(() => '');
    return (bySrvr ? /^Mode: (\w+)/m : /^zk_server_state\s+(\w+)/m).exec(reply)?.[1];
  }

  private get words(): readonly string[] {
    return this.config.fourLetterWords ?? HARNESS_WORDS;
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    this.process = undefined;
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }

  private writeConfig(): string {
    const { tickTime = 200, syncLimit = 10, initLimit = 20, forceSync = false, myid, peers } = this.config;
    const data = join(this.dataDir, 'data');
    mkdirSync(data, { recursive: true });
    const lines = [
      `tickTime=${tickTime}`,
      `dataDir=${data}`,
      `clientPort=${this.port}`,
      'clientPortAddress=127.0.0.1',
      `initLimit=${initLimit}`,
      `syncLimit=${syncLimit}`,
      'maxClientCnxns=0',
      'admin.enableServer=false',
      `4lw.commands.whitelist=${this.words.join(',')}`,
      `forceSync=${forceSync ? 'yes' : 'no'}`,
      ...(this.config.extraConfig ?? []),
      ...(peers ?? []),
    ];
    if (myid !== undefined) writeFileSync(join(data, 'myid'), String(myid));
    const cfg = join(this.dataDir, 'zoo.cfg');
    writeFileSync(cfg, lines.join('\n') + '\n');
    return cfg;
  }
}
