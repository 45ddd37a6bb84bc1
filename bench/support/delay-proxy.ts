/**
 * A TCP proxy that holds every chunk for a fixed one-way delay in each direction, in order:
 * the network with latency of the benchmark's latency pass. It runs as a process of its own
 * (`DelayProxy.start` forks this file), so its timers never share an event loop with a
 * client it delays; every implementation of a pass connects through the same process.
 *
 * Node's timers have a 1 ms granularity, too coarse for a 0.25 ms delay: a chunk due in
 * 2 ms or more waits on a timer set to wake 1 ms early, the rest of the way (and every
 * shorter delay) on a `setImmediate` loop that reads `process.hrtime` and lets I/O in
 * between turns. That loop keeps one core busy while a chunk is in flight, so the proxy
 * reports its own CPU with the delay it actually applied (`DelayStats`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';

import { median, percentile } from './sample-stats.js';

/** The delay the proxy applied, per direction, in µs (arrival of a chunk to its write). */
export interface DelayStats {
  readonly oneWayMs: number;
  readonly toServer: LaneStats;
  readonly toClient: LaneStats;
  /** The proxy process's CPU (user + system) since it started, in ms. */
  readonly cpuMs: number;
  readonly connections: number;
}

export interface LaneStats {
  readonly chunks: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
}

type ProxyMessage = { type: 'listening'; ports: number[] } | { type: 'stats'; stats: DelayStats };

/** Held samples per direction; beyond that, the oldest half is dropped (the figures are medians and tails). */
const MAX_SAMPLES = 200_000;

/** One direction of one connection: chunks leave in arrival order, each `delayNs` after it came. */
class Lane {
  private readonly queue: Array<{ readonly at: bigint; readonly chunk: Buffer | null }> = [];
  private armed = false;

  constructor(
    private readonly delayNs: bigint,
    private readonly out: Socket,
    private readonly held: number[],
  ) {}

  /** A chunk, or null for the end of the stream (sent after every chunk before it). */
  push(chunk: Buffer | null): void {
    this.queue.push({ at: process.hrtime.bigint(), chunk });
    this.arm();
  }

  private arm(): void {
    if (this.armed || this.queue.length === 0) return;
    this.armed = true;
    const waitMs = Number(this.queue[0].at + this.delayNs - process.hrtime.bigint()) / 1e6;
    if (waitMs >= 2) setTimeout(this.tick, Math.floor(waitMs) - 1);
    else setImmediate(this.tick);
  }

  private readonly tick = (): void => {
    this.armed = false;
    const now = process.hrtime.bigint();
    while (this.queue.length > 0 && this.queue[0].at + this.delayNs <= now) {
      const { at, chunk } = this.queue.shift()!;
      if (this.out.destroyed || this.out.writableEnded) continue;
      if (chunk === null) this.out.end();
      else this.out.write(chunk);
      if (this.held.length >= MAX_SAMPLES) this.held.splice(0, MAX_SAMPLES / 2);
      this.held.push(Number(now - at) / 1e3);
    }
    this.arm();
  };
}

function laneStats(held: readonly number[]): LaneStats {
  if (held.length === 0) return { chunks: 0, p50Us: 0, p99Us: 0, maxUs: 0 };
  return {
    chunks: held.length,
    p50Us: median(held),
    p99Us: percentile(held, 99),
    maxUs: held.reduce((a, b) => Math.max(a, b), 0),
  };
}

/**
 * The proxy's body, in the forked process: listens on a free loopback port per target,
 * reports them in the targets' order, answers 'stats' (summed over every target).
 */
function serve(targets: ReadonlyArray<{ host: string; port: number }>, oneWayMs: number): void {
  const delayNs = BigInt(Math.round(oneWayMs * 1e6));
  const held = { toServer: [] as number[], toClient: [] as number[] };
  let connections = 0;
  const ports: number[] = [];
  // Half-open sockets: each side's end is passed on by its lane, behind the data still held.
  const listen = (target: { host: string; port: number }): Promise<number> => {
    const server = createServer({ allowHalfOpen: true }, (client) => {
      connections++;
      const upstream = connect({ ...target, allowHalfOpen: true });
      for (const socket of [client, upstream]) socket.setNoDelay(true);
      const toServer = new Lane(delayNs, upstream, held.toServer);
      const toClient = new Lane(delayNs, client, held.toClient);
      client.on('data', (chunk: Buffer) => toServer.push(chunk));
      upstream.on('data', (chunk: Buffer) => toClient.push(chunk));
      // An end travels in order behind the data; a reset or error closes the other side at once.
      client.on('end', () => toServer.push(null));
      upstream.on('end', () => toClient.push(null));
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', (hadError) => hadError && upstream.destroy());
      upstream.on('close', (hadError) => hadError && client.destroy());
    });
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
  };
  void (async () => {
    for (const target of targets) ports.push(await listen(target));
    process.send!({ type: 'listening', ports });
  })();
  process.on('message', (message: unknown) => {
    if (message !== 'stats') return;
    const { user, system } = process.cpuUsage();
    const stats: DelayStats = {
      oneWayMs,
      toServer: laneStats(held.toServer),
      toClient: laneStats(held.toClient),
      cpuMs: (user + system) / 1e3,
      connections,
    };
    process.send!({ type: 'stats', stats });
  });
  process.on('disconnect', () => process.exit(0));
}

/** The parent's handle on a proxy process. */
export class DelayProxy {
  private constructor(
    private readonly child: ChildProcess,
    /** The loopback port the proxy listens on for each target, in the order given. */
    readonly ports: readonly number[],
    readonly oneWayMs: number,
  ) {}

  /** The proxy's process. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The loopback port the proxy listens on (for the first target). */
  get port(): number {
    return this.ports[0];
  }

  /** What clients connect to instead of the server (the first target). */
  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** What clients connect to instead of each target ("127.0.0.1:port"), in the order given. */
  get endpoints(): string[] {
    return this.ports.map((port) => `127.0.0.1:${port}`);
  }

  /** Forks a proxy to `target` ("host:port"; the first server of a connection string) and waits until it listens. */
  static start(target: string, oneWayMs: number): Promise<DelayProxy> {
    return DelayProxy.startMany([target.split('/')[0].split(',')[0]], oneWayMs);
  }

  /**
   * One proxy process for several servers ("host:port" each), a port per server: one
   * process, so one busy wait, however many servers a pass delays at once.
   */
  static async startMany(targets: readonly string[], oneWayMs: number): Promise<DelayProxy> {
    const child = fork(__filename, [targets.join(','), String(oneWayMs)], {
      execArgv: ['-r', join(__dirname, '..', '..', 'scripts', 'ts-register.cjs')],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const ports = await new Promise<number[]>((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`delay proxy exited (${code}) before listening`));
      child.once('exit', onExit);
      child.once('error', reject);
      child.on('message', (message: ProxyMessage) => {
        if (message.type !== 'listening') return;
        child.off('exit', onExit);
        resolve(message.ports);
      });
    });
    return new DelayProxy(child, ports, oneWayMs);
  }

  /** The delay applied so far, per direction, and the proxy's CPU. */
  stats(): Promise<DelayStats> {
    return new Promise((resolve) => {
      const onMessage = (message: ProxyMessage): void => {
        if (message.type !== 'stats') return;
        this.child.off('message', onMessage);
        resolve(message.stats);
      };
      this.child.on('message', onMessage);
      this.child.send('stats');
    });
  }

  /** Ends the process (its connections with it) and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }
}

if (require.main === module) {
  const [hostPorts, oneWayMs] = process.argv.slice(2);
  const targets = hostPorts.split(',').map((hostPort) => {
    const [host, port] = hostPort.split(':');
    return { host, port: Number(port) };
  });
  serve(targets, Number(oneWayMs));
}
