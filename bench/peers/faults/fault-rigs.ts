/**
 * The lock service of one lock in one fault case, and the fault itself: its servers (a
 * ZooKeeper for ours, a Redis, or three for redlock-3), how the holders A and B reach them,
 * and what strikes ~200 ms after A's grant. A trial (./fault-trial.ts) calls `prepare`,
 * `beforeHold`, `strike` and `settle` in turn; `destroy` stops every process and proxy the
 * rig started, whatever state it is in.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { RedisServer, type RedisPersistence } from '../../../test/support/redis/redis-server.js';
import { ZkEnsemble } from '../../../test/support/zookeeper/zk-ensemble.js';
import { ZkServer } from '../../../test/support/zookeeper/zk-server.js';
import { resumeGuard } from '../../support/resume-guard.js';
import { redisKeyOf } from '../locks/lock-keys.js';
import type { PeerId } from '../peer-lock.js';
import type { PeerWorker } from '../peer-worker.js';
import { FaultProxy } from './fault-proxy.js';
import type { FaultCase } from './fault-scenarios.js';

/** How long a holder is paused or cut off, in TTLs: past its TTL or session timeout, by half. */
export const FAULT_TTLS = 1.5;
/**
 * A pause strikes between two of A's writes: after one ends, while the next is due more
 * than this far ahead (a pause inside a write would stop A between its check and its
 * write, a case the checker's times cannot tell from a write that was merely slow).
 */
const PAUSE_MARGIN_MS = 10;
/** How many of A's writes a pause waits through for such a gap. */
const PAUSE_TRIES = 40;
/** How long after a pause's end its resume guard resumes A, if nobody else did (see `resumeGuard`). */
const RESUME_GUARD_SLACK_MS = 10_000;

export interface RigOptions {
  readonly peer: PeerId;
  readonly ttlMs: number;
  /** Told of every process the rig starts (restarts included), for the caller to check they are gone. */
  readonly started: (pid: number | undefined) => void;
}

/** How A and B reach the lock service in one trial: each one's `PeerConfig.endpoints`. */
export interface TrialWiring {
  readonly a: readonly string[];
  readonly b: readonly string[];
}

/** What the fault can reach of the trial as it strikes. */
export interface StrikeContext {
  readonly key: string;
  /** Holder A's worker. */
  readonly a: PeerWorker;
  /**
   * Resolves as A's next write (its unfenced transaction, the second of the pair) returns,
   * with the hrtime (ns) at which its following write is due; undefined once A's hold is over.
   */
  nextWriteDone(): Promise<{ readonly nextDue: bigint } | undefined>;
}

/** What the fault did, for the checker and the trial's record. */
export interface StrikeRecord {
  /**
   * A was stopped from `from` to `to` (hrtime ns strings); `betweenWrites` false when the
   * stop found no gap between two writes (see `pauseA`).
   */
  readonly aPaused?: { readonly from: string; readonly to: string; readonly betweenWrites: boolean };
  /** Anything about this strike the trial's record should say. */
  readonly note?: string;
}

export interface FaultRig {
  /** Before each trial: the servers up (started on the first call), and how A and B reach them. */
  prepare(): Promise<TrialWiring>;
  /** Just before A asks for the lock. */
  beforeHold(): Promise<void>;
  /** The fault; resolves once it is over (a pause resumed, a partition healed, a server back). */
  strike(context: StrikeContext): Promise<StrikeRecord>;
  /** After each trial, also a failed one: what the fault left is put back for the next. */
  settle(): Promise<void>;
  /** Stops every process and proxy it started. */
  destroy(): Promise<void>;
}

/**
 * ZooKeeper settings that grant ours exactly the TTL as its session timeout (whatever it
 * asks), with a tick of a tenth of it (at most 200 ms, ZkServer's default): the server
 * expires sessions in tick-sized buckets, so a session ends at most a tick after its TTL.
 */
export function zkSessionSettings(ttlMs: number): { tickTime: number; extraConfig: string[] } {
  return {
    tickTime: Math.max(20, Math.min(200, Math.floor(ttlMs / 10))),
    extraConfig: [`minSessionTimeout=${ttlMs}`, `maxSessionTimeout=${ttlMs}`],
  };
}

/** Makes the rig for `faultCase` and `options.peer`. */
export function makeRig(faultCase: FaultCase, options: RigOptions): FaultRig {
  if (faultCase.fault === 'failover')
    return options.peer === 'ours' ? new EnsembleFailoverRig(options) : new RedisFailoverRig(options);
  const persistence: RedisPersistence = faultCase.variant === 'redis-aof' ? 'aof-everysec' : 'none';
  return new StandingRig(options, faultCase, persistence);
}

/** Starts `servers` (all at once), telling `started` of each; stops them all if one fails. */
async function startAll<S extends { start(): Promise<void>; pid: number | undefined }>(
  servers: readonly S[],
  started: RigOptions['started'],
  stop: (server: S) => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled(servers.map((server) => server.start()));
  for (const server of servers) started(server.pid);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (!failed) return;
  await Promise.allSettled(servers.map(stop));
  throw failed.reason;
}

/**
 * One lock's own servers, started once and kept for every trial: a standalone ZooKeeper
 * for ours, one Redis (three for redlock-3) for the others.
 */
class LockServers {
  private constructor(
    private readonly zk: ZkServer | undefined,
    private readonly redis: readonly RedisServer[],
    private readonly started: RigOptions['started'],
  ) {}

  static async start(options: RigOptions, persistence: RedisPersistence): Promise<LockServers> {
    if (options.peer === 'ours') {
      const zk = new ZkServer(zkSessionSettings(options.ttlMs));
      await startAll([zk], options.started, (server) => server.destroy());
      return new LockServers(zk, [], options.started);
    }
    const count = options.peer === 'redlock-3' ? 3 : 1;
    const redis = Array.from({ length: count }, () => new RedisServer({ persistence }));
    await startAll(redis, options.started, (server) => server.destroy());
    return new LockServers(undefined, redis, options.started);
  }

  get endpoints(): string[] {
    return this.zk ? [this.zk.connectionString] : this.redis.map((server) => server.endpoint);
  }

  /** kill -9 of the (first) server, and at once a start on the same port and data. */
  async crashFirst(): Promise<void> {
    if (this.zk) {
      await this.zk.stop('SIGKILL');
      await this.zk.start();
      this.started(this.zk.pid);
    } else {
      await this.redis[0].restart();
      this.started(this.redis[0].pid);
    }
  }

  async destroy(): Promise<void> {
    await Promise.allSettled([this.zk?.destroy(), ...this.redis.map((server) => server.destroy())]);
  }
}

/**
 * Servers that stand through every trial: the pause, the partition (A through a proxy per
 * server, B direct), the restart, and the long work (no fault).
 */
class StandingRig implements FaultRig {
  private servers: LockServers | undefined;
  private proxies: FaultProxy[] = [];

  constructor(
    private readonly options: RigOptions,
    private readonly faultCase: FaultCase,
    private readonly persistence: RedisPersistence,
  ) {}

  async prepare(): Promise<TrialWiring> {
    if (!this.servers) {
      this.servers = await LockServers.start(this.options, this.persistence);
      if (this.faultCase.fault === 'partition') {
        this.proxies = this.servers.endpoints.map((endpoint) => new FaultProxy(endpoint));
        await Promise.all(this.proxies.map((proxy) => proxy.start()));
      }
    }
    const direct = this.servers.endpoints;
    return { a: this.proxies.length > 0 ? this.proxies.map((proxy) => proxy.endpoint) : direct, b: direct };
  }

  async beforeHold(): Promise<void> {}

  async strike(context: StrikeContext): Promise<StrikeRecord> {
    const faultMs = FAULT_TTLS * this.options.ttlMs;
    switch (this.faultCase.fault) {
      case 'pause':
        return pauseA(context, faultMs);
      case 'partition':
        for (const proxy of this.proxies) proxy.blackhole();
        await sleep(faultMs);
        for (const proxy of this.proxies) proxy.heal();
        return {};
      case 'restart':
        await this.servers!.crashFirst();
        return {};
      default:
        return {};
    }
  }

  async settle(): Promise<void> {
    for (const proxy of this.proxies) proxy.heal();
  }

  async destroy(): Promise<void> {
    await Promise.allSettled(this.proxies.map((proxy) => proxy.stop()));
    await this.servers?.destroy();
  }
}

/**
 * Stops A (SIGSTOP) for `pauseMs`, then resumes it (SIGCONT), the stop landing between two
 * of A's writes (see `PAUSE_MARGIN_MS`); if no gap came in `PAUSE_TRIES` writes (a machine
 * so slow that A writes back to back), it strikes anyway, and says so (`betweenWrites` false).
 */
async function pauseA(context: StrikeContext, pauseMs: number): Promise<StrikeRecord> {
  // Should this process be killed during the pause, the guard resumes A (which then exits, its
  // parent gone) a while after the pause would have ended. Taken before the search for a gap
  // between A's writes: spawning it between that search and the stop would move the stop into
  // a write (a stale write then lands, and the trial says it struck between writes).
  const guard = resumeGuard(context.a.pid, pauseMs + RESUME_GUARD_SLACK_MS);
  try {
    let between = false;
    for (let tries = 0; tries < PAUSE_TRIES && !between; tries++) {
      const done = await context.nextWriteDone();
      if (!done) break;
      between = process.hrtime.bigint() + BigInt(PAUSE_MARGIN_MS) * 1_000_000n < done.nextDue;
    }
    // Each time is read before its signal is sent, so that every event A stamps after waking
    // is later than `to`.
    const from = String(process.hrtime.bigint());
    context.a.kill('SIGSTOP');
    let to: string;
    try {
      await sleep(pauseMs);
    } finally {
      to = String(process.hrtime.bigint());
      context.a.kill('SIGCONT');
    }
    return { aPaused: { from, to, betweenWrites: between } };
  } finally {
    // Also when the search for a gap threw: A was never stopped, and the guard must not outlive the trial.
    guard.cancel();
  }
}

/**
 * Redis failing over, new servers each trial: a primary, and a replica whose replication
 * link runs through a proxy, cut just before A asks for the lock (so A's key never reaches
 * it: asynchronous replication); every client reaches "the primary" through a second proxy.
 * The fault: the primary killed (kill -9), `REPLICAOF NO ONE` on the replica, the clients'
 * proxy turned to it, as Sentinel and a Sentinel-aware client would.
 */
class RedisFailoverRig implements FaultRig {
  private primary: RedisServer | undefined;
  private replica: RedisServer | undefined;
  private link: FaultProxy | undefined;
  private clients: FaultProxy | undefined;

  constructor(private readonly options: RigOptions) {}

  async prepare(): Promise<TrialWiring> {
    this.primary = new RedisServer();
    await startAll([this.primary], this.options.started, (server) => server.destroy());
    this.link = new FaultProxy(this.primary.endpoint);
    this.clients = new FaultProxy(this.primary.endpoint);
    await Promise.all([this.link.start(), this.clients.start()]);
    this.replica = new RedisServer({ replicaOf: this.link.endpoint });
    await startAll([this.replica], this.options.started, (server) => server.destroy());
    return { a: [this.clients.endpoint], b: [this.clients.endpoint] };
  }

  async beforeHold(): Promise<void> {
    this.link!.blackhole();
  }

  async strike(context: StrikeContext): Promise<StrikeRecord> {
    const key = redisKeyOf(this.options.peer, context.key)!;
    const replicated = (await this.replica!.command('EXISTS', key)) !== '0';
    await this.primary!.kill('SIGKILL');
    await this.replica!.command('REPLICAOF', 'NO', 'ONE');
    this.clients!.retarget(this.replica!.endpoint);
    return replicated ? { note: 'the replica had the key before the primary died' } : {};
  }

  async settle(): Promise<void> {
    await this.destroy();
  }

  async destroy(): Promise<void> {
    await Promise.allSettled([this.link?.stop(), this.clients?.stop()]);
    await Promise.allSettled([this.primary?.destroy(), this.replica?.destroy()]);
    this.primary = this.replica = this.link = this.clients = undefined;
  }
}

/** Ours failing over: a 3-server ensemble, its leader killed (kill -9); restarted after the trial. */
class EnsembleFailoverRig implements FaultRig {
  private ensemble: ZkEnsemble | undefined;
  private killed: number | undefined;

  constructor(private readonly options: RigOptions) {}

  async prepare(): Promise<TrialWiring> {
    if (!this.ensemble) {
      const { tickTime, extraConfig } = zkSessionSettings(this.options.ttlMs);
      this.ensemble = await ZkEnsemble.start(3, tickTime, () => extraConfig);
      for (const server of this.ensemble.servers) this.options.started(server.pid);
    }
    const endpoints = this.ensemble.servers.map((server) => server.connectionString);
    return { a: endpoints, b: endpoints };
  }

  async beforeHold(): Promise<void> {}

  async strike(): Promise<StrikeRecord> {
    const leader = await this.ensemble!.leader();
    this.killed = leader;
    await this.ensemble!.kill(leader);
    return { note: `server ${leader + 1} (the leader) killed` };
  }

  async settle(): Promise<void> {
    const killed = this.killed;
    if (killed === undefined || !this.ensemble) return;
    this.killed = undefined;
    await this.ensemble.restart(killed);
    this.options.started(this.ensemble.servers[killed].pid);
    await this.ensemble.leader();
  }

  async destroy(): Promise<void> {
    await this.ensemble?.destroy();
  }
}
