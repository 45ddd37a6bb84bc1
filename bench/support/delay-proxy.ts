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

type ProxyMessage = { type: 'listening'; port: number } | { type: 'stats'; stats: DelayStats };

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

/** The proxy's body, in the forked process: listens on a free loopback port, reports it, answers 'stats'. */
function serve(target: { host: string; port: number }, oneWayMs: number): void {
  const delayNs = BigInt(Math.round(oneWayMs * 1e6));
  const held = { toServer: [] as number[], toClient: [] as number[] };
  let connections = 0;
  // Half-open sockets: each side's end is passed on by its lane, behind the data still held.
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
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address && typeof address === 'object') process.send!({ type: 'listening', port: address.port });
  });
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
    /** The loopback port the proxy listens on. */
    readonly port: number,
    readonly oneWayMs: number,
  ) {}

  /** What clients connect to instead of the server. */
  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Forks a proxy to `target` ("host:port"; the first server of a connection string) and waits until it listens. */
  static async start(target: string, oneWayMs: number): Promise<DelayProxy> {
    const hostPort = target.split('/')[0].split(',')[0];
    const child = fork(__filename, [hostPort, String(oneWayMs)], {
      execArgv: ['-r', join(__dirname, '..', '..', 'scripts', 'ts-register.cjs')],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`delay proxy exited (${code}) before listening`));
      child.once('exit', onExit);
      child.once('error', reject);
      child.on('message', (message: ProxyMessage) => {
        if (message.type !== 'listening') return;
        child.off('exit', onExit);
        resolve(message.port);
      });
    });
    return new DelayProxy(child, port, oneWayMs);
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
  const [hostPort, oneWayMs] = process.argv.slice(2);
  const [host, port] = hostPort.split(':');
  serve({ host, port: Number(port) }, Number(oneWayMs));
}
