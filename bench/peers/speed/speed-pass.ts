/**
 * The speed half of the peers pass: every lock, each as its README shows and with its
 * defaults, on the same machine in one run: uncontended cycles, handoff latency and 10
 * contenders on one key, on loopback and behind the delay proxy at each --latency delay.
 * Rounds take the locks in a shuffled order each time, so a burst of load on the shared
 * machine falls on every lock alike; each figure is the median of rounds.
 */
import { processCpuNs } from '../../support/cpu.js';
import { DelayProxy } from '../../support/delay-proxy.js';
import { median, nsBetween, shuffled } from '../../support/sample-stats.js';
import { openZkTarget, type ZkTarget } from '../../support/zookeeper-target.js';
import { RedisServer } from '../../../test/support/redis/redis-server.js';
import { PEER_IDS, type PeerId } from '../peer-lock.js';
import type { CycleRecord } from '../peer-worker.protocol.js';
import { PeerWorker } from '../peer-worker.js';
import { cyclesPerSecond, grantsPerSecond, handoffUs, overlappingHolds, spread, type Spread } from './speed-metrics.js';

export interface SpeedCounts {
  readonly rounds: number;
  /**
   * Before round 1, at each delay: each lock's first client loops alone this long, then
   * every client contends for a fifth of it, not counted: the JIT of the workers and of the
   * servers (ZooKeeper's JVM starts cold) is hot before anything is measured.
   */
  readonly warmupMs: number;
  /** Per round: one client's cycles back to back, after `uncontendedWarmup` not counted. */
  readonly uncontendedCycles: number;
  readonly uncontendedWarmup: number;
  /** Per round: handoffs measured, the holder holding `handoffHoldMs` while the waiter asks `handoffLagMs` after it. */
  readonly handoffs: number;
  readonly handoffHoldMs: number;
  readonly handoffLagMs: number;
  /** Per round: `contenders` clients (a process each) loop on one key for `contendedMs`, holding `contendedHoldMs`. */
  readonly contenders: number;
  readonly contendedMs: number;
  readonly contendedHoldMs: number;
}

export const SPEED_COUNTS: SpeedCounts = {
  rounds: 3,
  warmupMs: 3_000,
  uncontendedCycles: 200,
  uncontendedWarmup: 20,
  handoffs: 20,
  handoffHoldMs: 40,
  handoffLagMs: 15,
  contenders: 10,
  contendedMs: 2_000,
  contendedHoldMs: 1,
};

export const QUICK_SPEED_COUNTS: SpeedCounts = {
  rounds: 1,
  warmupMs: 0,
  uncontendedCycles: 10,
  uncontendedWarmup: 2,
  handoffs: 3,
  handoffHoldMs: 40,
  handoffLagMs: 15,
  contenders: 3,
  contendedMs: 300,
  contendedHoldMs: 1,
};

/** One lock at one network delay: the medians of rounds. */
export interface SpeedRow {
  readonly peer: PeerId;
  /** One-way delay of the proxy in ms; 0: loopback, no proxy. */
  readonly delayMs: number;
  readonly uncontended: {
    readonly cyclesPerSecond: number;
    /** The client process's CPU per cycle, µs. */
    readonly clientCpuUs: number;
    /** The lock service's CPU per cycle (every server the lock uses), µs. */
    readonly serverCpuUs: number;
  };
  /** Release to the waiter's grant, µs, over every round's samples. */
  readonly handoff: Spread;
  readonly contended: {
    readonly grantsPerSecond: number;
    /** The contenders' CPU per grant, µs. */
    readonly clientCpuUs: number;
    /** Calls that failed (timed out) while contending, over every round. */
    readonly failures: number;
  };
  /** Holds of two clients that intersected in any run (must be 0: checked, not assumed). */
  readonly overlaps: number;
  /** Calls that failed outside the contended runs, and the first failure's message. */
  readonly failures: number;
  readonly firstFailure?: string;
}

export interface SpeedResults {
  readonly counts: SpeedCounts;
  readonly delays: readonly number[];
  readonly servers: { readonly zookeeper: string; readonly redis: string };
  readonly rows: readonly SpeedRow[];
}

export interface SpeedOptions {
  readonly peers?: readonly PeerId[];
  /** One-way delays (ms) besides loopback. */
  readonly delays: readonly number[];
  readonly counts: SpeedCounts;
  readonly log?: (line: string) => void;
  /** Told the pid of every process the pass starts (servers, workers), for a test to see them all gone after. */
  readonly started?: (pids: readonly number[]) => void;
}

/** Workers started side by side (see atDelay). */
const START_AT_ONCE = 3;

/** The lock services of the pass: ZooKeeper as in production (forceSync), three Redis servers. */
interface Services {
  readonly zk: ZkTarget;
  readonly redis: readonly RedisServer[];
  /** Every server's address, in the order [zk, redis...]. */
  readonly addresses: readonly string[];
}

export async function runSpeedPass(options: SpeedOptions): Promise<SpeedResults> {
  const log = options.log ?? (() => undefined);
  const peers = options.peers ?? PEER_IDS;
  const redis = [0, 1, 2].map(() => new RedisServer({ persistence: 'none' }));
  let zk: ZkTarget | undefined;
  try {
    zk = await openZkTarget({ forceSync: true });
    await Promise.all(redis.map((server) => server.start()));
    options.started?.([...zk.serverPids(), ...redis.flatMap((server) => (server.pid ? [server.pid] : []))]);
    const services: Services = {
      zk,
      redis,
      addresses: [zk.connectionString, ...redis.map((server) => server.endpoint)],
    };
    const redisVersion = (await redis[0].command('INFO', 'server')).match(/redis_version:(\S+)/)?.[1] ?? '?';
    const rows: SpeedRow[] = [];
    for (const delayMs of [0, ...options.delays]) {
      log(`peers speed: ${delayMs ? `${delayMs} ms each way through the delay proxy` : 'loopback'}`);
      rows.push(...(await atDelay(services, peers, delayMs, options, log)));
    }
    return {
      counts: options.counts,
      delays: options.delays,
      servers: {
        zookeeper: `standalone ZooKeeper, forceSync=yes, tickTime ${zk.tickTime} ms (as in production)`,
        redis: `redis-server ${redisVersion}, no persistence (its snapshots never touch a lock's round trip)`,
      },
      rows,
    };
  } finally {
    await Promise.allSettled([zk?.stop(), ...redis.map((server) => server.destroy())]);
  }
}

/** Every lock at one delay: workers for all, then rounds over the locks in a shuffled order. */
async function atDelay(
  services: Services,
  peers: readonly PeerId[],
  delayMs: number,
  options: SpeedOptions,
  log: (line: string) => void,
): Promise<SpeedRow[]> {
  const { counts } = options;
  const proxy = delayMs > 0 ? await DelayProxy.startMany(services.addresses, delayMs) : undefined;
  if (proxy?.pid) options.started?.([proxy.pid]);
  const workers = new Map<PeerId, PeerWorker[]>();
  try {
    const [zk, ...redis] = proxy?.endpoints ?? services.addresses;
    for (const peer of peers) {
      const endpoints = peer === 'ours' ? [zk] : peer === 'redlock-3' ? redis : [redis[0]];
      const config = { id: peer, endpoints, acquireTimeoutMs: 30_000 };
      const started: PeerWorker[] = [];
      workers.set(peer, started); // closed in the finally, however many started
      // A few at a time: ten Nest contexts compiling at once on two cores took over the
      // workers' 30 s to get ready.
      while (started.length < Math.max(2, counts.contenders)) {
        const batch = Math.min(START_AT_ONCE, Math.max(2, counts.contenders) - started.length);
        const settled = await Promise.allSettled(
          Array.from({ length: batch }, () => PeerWorker.start({ peer: config })),
        );
        const fresh = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
        started.push(...fresh);
        options.started?.(fresh.map((worker) => worker.pid));
        const failed = settled.find((result) => result.status === 'rejected');
        if (failed) throw failed.reason;
      }
    }
    const serverPids = (peer: PeerId): number[] =>
      peer === 'ours'
        ? services.zk.serverPids()
        : (peer === 'redlock-3' ? services.redis : [services.redis[0]]).flatMap((s) => (s.pid ? [s.pid] : []));
    if (counts.warmupMs > 0) {
      log(`  warm-up: ${counts.warmupMs} ms alone and ${counts.warmupMs / 5} ms contended per lock`);
      for (const peer of peers) await warmUp(workers.get(peer)!, `peers-warmup-${peer}`, counts);
    }
    const samples = new Map<PeerId, Samples>(peers.map((peer) => [peer, emptySamples()]));
    for (let round = 1; round <= counts.rounds; round++) {
      for (const peer of shuffled(peers)) {
        log(`  round ${round}/${counts.rounds}: ${peer}`);
        await measure(peer, workers.get(peer)!, serverPids(peer), `${round}`, counts, samples.get(peer)!, log);
      }
    }
    return peers.map((peer) => summary(peer, delayMs, samples.get(peer)!));
  } finally {
    await Promise.allSettled([...workers.values()].flat().map((worker) => worker.close()));
    await proxy?.stop();
  }
}

/** Loops not counted, alone then contended, so that no lock is measured cold. */
async function warmUp(workers: readonly PeerWorker[], key: string, counts: SpeedCounts): Promise<void> {
  await workers[0].loop({ cmd: 'loop', key, durationMs: counts.warmupMs, holdMs: 0 });
  await Promise.all(
    workers
      .slice(0, counts.contenders)
      .map((worker) =>
        worker.loop({ cmd: 'loop', key, durationMs: counts.warmupMs / 5, holdMs: counts.contendedHoldMs }),
      ),
  );
}

interface Samples {
  cyclesPerSecond: number[];
  clientCpuUs: number[];
  serverCpuUs: number[];
  handoffUs: number[];
  grantsPerSecond: number[];
  contendedCpuUs: number[];
  contendedFailures: number;
  overlaps: number;
  failures: number;
  firstFailure?: string;
}

const emptySamples = (): Samples => ({
  cyclesPerSecond: [],
  clientCpuUs: [],
  serverCpuUs: [],
  handoffUs: [],
  grantsPerSecond: [],
  contendedCpuUs: [],
  contendedFailures: 0,
  overlaps: 0,
  failures: 0,
});

/** Pairs tried per handoff sample at most (see `measure`). */
const HANDOFF_TRIES = 5;
/** The longest the waiter's lag grows to after pairs that measured nothing (see `measure`). */
export const MAX_HANDOFF_LAG_MS = 1_000;

/** One round of one lock: uncontended, handoffs, contenders; each on a key of its own. */
async function measure(
  peer: PeerId,
  workers: readonly PeerWorker[],
  serverPids: readonly number[],
  round: string,
  counts: SpeedCounts,
  into: Samples,
  log: (line: string) => void,
): Promise<void> {
  const key = (what: string): string => `peers-speed-${peer}-${round}-${what}`;
  const failed = (done: { failures: number; firstFailure?: string }): void => {
    into.failures += done.failures;
    into.firstFailure ??= done.firstFailure;
  };

  // Uncontended: one client, calls back to back.
  failed(await workers[0].loop({ cmd: 'loop', key: key('u'), cycles: counts.uncontendedWarmup, holdMs: 0 }));
  const serverBefore = processCpuNs(serverPids);
  const alone = await workers[0].loop({ cmd: 'loop', key: key('u'), cycles: counts.uncontendedCycles, holdMs: 0 });
  const serverNs = processCpuNs(serverPids) - serverBefore;
  failed(alone);
  if (alone.cycles.length > 0) {
    into.cyclesPerSecond.push(cyclesPerSecond(alone.cycles));
    into.clientCpuUs.push(alone.cpuUs / alone.cycles.length);
    into.serverCpuUs.push(serverNs / 1e3 / alone.cycles.length);
  }

  // Handoffs: the holder holds, the waiter asks a little later; roles alternate. A pair whose
  // waiter did not ask while the holder held (on a loaded machine the holder's grant may come
  // after the lag) measured no handoff: it is logged, and another pair tried, up to
  // HANDOFF_TRIES times the count, so that a round takes `counts.handoffs` samples. After such
  // a pair the lag grows to the holder's grant time plus the lag asked, and the hold with it
  // (the waiter still asks well inside it): what a handoff measures, the holder's release to
  // the waiter's grant, does not depend on either.
  const wanted = into.handoffUs.length + counts.handoffs;
  let lagMs = counts.handoffLagMs;
  for (let i = 0; into.handoffUs.length < wanted && i < counts.handoffs * HANDOFF_TRIES; i++) {
    const [holder, waiter] = i % 2 ? [workers[1], workers[0]] : [workers[0], workers[1]];
    const startAt = process.hrtime.bigint() + 5_000_000n;
    const lagNs = BigInt(Math.round(lagMs * 1e6));
    const holdMs = counts.handoffHoldMs + (lagMs - counts.handoffLagMs);
    const [held, waited] = await Promise.all([
      holder.loop({ cmd: 'loop', key: key('h'), cycles: 1, holdMs, startAt: String(startAt) }),
      waiter.loop({ cmd: 'loop', key: key('h'), cycles: 1, holdMs: 0, startAt: String(startAt + lagNs) }),
    ]);
    failed(held);
    failed(waited);
    into.overlaps += overlappingHolds([held.cycles, waited.cycles]);
    if (!held.cycles[0] || !waited.cycles[0]) continue;
    const handoff = handoffUs(held.cycles[0], waited.cycles[0]);
    if ('us' in handoff) into.handoffUs.push(handoff.us);
    else {
      log(`    ${peer}: handoff pair ${i + 1} measured no handoff (${handoff.missed})`);
      const grantMs = nsBetween(held.cycles[0].requestedAt, held.cycles[0].grantedAt) / 1e6;
      lagMs = Math.min(MAX_HANDOFF_LAG_MS, Math.max(lagMs, grantMs + counts.handoffLagMs));
    }
  }

  // Contenders: every worker loops on one key for the same span.
  const startAt = String(process.hrtime.bigint() + 20_000_000n);
  const runs = await Promise.all(
    workers.slice(0, counts.contenders).map((worker) =>
      worker.loop({
        cmd: 'loop',
        key: key('c'),
        durationMs: counts.contendedMs,
        holdMs: counts.contendedHoldMs,
        startAt,
      }),
    ),
  );
  const cycles: CycleRecord[][] = runs.map((run) => [...run.cycles]);
  const grants = cycles.reduce((sum, c) => sum + c.length, 0);
  into.overlaps += overlappingHolds(cycles);
  into.grantsPerSecond.push(grantsPerSecond(cycles, startAt, counts.contendedMs));
  into.contendedCpuUs.push(grants ? runs.reduce((sum, run) => sum + run.cpuUs, 0) / grants : Number.NaN);
  for (const run of runs) {
    into.contendedFailures += run.failures;
    into.firstFailure ??= run.firstFailure;
  }
}

function summary(peer: PeerId, delayMs: number, s: Samples): SpeedRow {
  return {
    peer,
    delayMs,
    uncontended: {
      cyclesPerSecond: median(s.cyclesPerSecond),
      clientCpuUs: median(s.clientCpuUs),
      serverCpuUs: median(s.serverCpuUs),
    },
    handoff: spread(s.handoffUs),
    contended: {
      grantsPerSecond: median(s.grantsPerSecond),
      clientCpuUs: median(s.contendedCpuUs),
      failures: s.contendedFailures,
    },
    overlaps: s.overlaps,
    failures: s.failures,
    ...(s.firstFailure ? { firstFailure: s.firstFailure } : {}),
  };
}
