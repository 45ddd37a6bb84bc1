/** Command-line flags of `npm run bench`, and the counts each scenario runs with. */
import { PEER_IDS, type PeerId } from './peers/peer-lock.js';

export interface ScenarioCounts {
  /** `cycles` and `warmup` per slice; `slices` turns per round (see Scenario.slices). */
  readonly uncontended: { readonly cycles: number; readonly warmup: number; readonly slices: number };
  readonly handoff: { readonly handoffs: number; readonly warmup: number };
  /** Each round drains each queue size `slices` times, implementations taking turns; the median counts. */
  readonly drain: { readonly waiters: readonly number[]; readonly slices: number };
  readonly manyLocks: { readonly locks: number; readonly cyclesPerLock: number };
  readonly reentrant: { readonly calls: number; readonly warmup: number };
  readonly readHeavy: {
    readonly readers: number;
    readonly durationMs: number;
    readonly writerPauseMs: number;
    readonly stallTimeoutMs: number;
  };
  /** `cycles` and `warmup` per slice, every variant once per cycle; `slices` turns per round. */
  readonly multiLock: {
    readonly locks: number;
    readonly cycles: number;
    readonly warmup: number;
    readonly slices: number;
  };
  /**
   * `contenders` loop for `durationMs` after `warmupGrants` (grants/s); then each size of
   * `costContenders` for `costGrants` grants after as many as it has contenders (cost per grant).
   */
  readonly leases: {
    readonly contenders: number;
    readonly maxLeases: number;
    readonly holdMs: number;
    readonly warmupGrants: number;
    readonly durationMs: number;
    readonly costContenders: readonly number[];
    readonly costGrants: number;
  };
  /**
   * `clients` sessions of `sessionTimeoutMs` (the least a tickTime of 2000 grants) stay idle
   * for 0.6 of it (the proof of their last write is stale by then), then each acquires once;
   * one holds for `holdMs`; then `warmAcquires` acquires in a row on the same session.
   */
  readonly idle: {
    readonly clients: number;
    readonly sessionTimeoutMs: number;
    readonly holdMs: number;
    readonly warmAcquires: number;
  };
  /**
   * For each size of `clients`, C sessions each loop acquire + release on a lock of its
   * own, all at once, spread over `processes` worker processes per implementation (fewer
   * when C is smaller); cycles are counted over `durationMs` after `warmupMs` of the loop.
   */
  readonly capacity: {
    readonly clients: readonly number[];
    readonly processes: number;
    readonly warmupMs: number;
    readonly durationMs: number;
  };
  /**
   * `sessions` sessions of ours (one backend each, default options) spread over `processes`
   * worker processes, idle for `idleMs`; then `holders` of them hold a lock each for `holdMs`.
   */
  readonly sessions: {
    readonly sessions: number;
    readonly processes: number;
    readonly idleMs: number;
    readonly holders: number;
    readonly holdMs: number;
  };
  /** `locks` distinct names held at once by one session, taken `batch` at a time. */
  readonly heldLocks: { readonly locks: number; readonly batch: number };
}

/**
 * Short runs, many rounds: on a shared 2-core machine, load comes in bursts, and the more
 * often the implementations take turns, the more evenly the bursts fall on each.
 */
export const FULL_COUNTS: ScenarioCounts = {
  uncontended: { cycles: 200, warmup: 20, slices: 3 },
  handoff: { handoffs: 120, warmup: 5 },
  drain: { waiters: [10, 50], slices: 3 },
  manyLocks: { locks: 1000, cyclesPerLock: 5 },
  reentrant: { calls: 20_000, warmup: 2_000 },
  readHeavy: { readers: 20, durationMs: 1_000, writerPauseMs: 20, stallTimeoutMs: 500 },
  multiLock: { locks: 5, cycles: 40, warmup: 5, slices: 3 },
  leases: {
    contenders: 20,
    maxLeases: 5,
    holdMs: 1,
    warmupGrants: 40,
    durationMs: 1_000,
    costContenders: [10, 100],
    costGrants: 200,
  },
  idle: { clients: 4, sessionTimeoutMs: 4000, holdMs: 1500, warmAcquires: 5 },
  capacity: { clients: [1, 10, 50], processes: 5, warmupMs: 500, durationMs: 1500 },
  sessions: { sessions: 1_000, processes: 10, idleMs: 10_000, holders: 100, holdMs: 5_000 },
  heldLocks: { locks: 10_000, batch: 1_000 },
};

/** `--quick`: enough to exercise every path, not to measure anything. */
export const QUICK_COUNTS: ScenarioCounts = {
  uncontended: { cycles: 20, warmup: 5, slices: 1 },
  handoff: { handoffs: 8, warmup: 2 },
  drain: { waiters: [3, 6], slices: 1 },
  manyLocks: { locks: 40, cyclesPerLock: 2 },
  reentrant: { calls: 500, warmup: 50 },
  readHeavy: { readers: 4, durationMs: 250, writerPauseMs: 20, stallTimeoutMs: 250 },
  multiLock: { locks: 5, cycles: 4, warmup: 1, slices: 1 },
  leases: {
    contenders: 4,
    maxLeases: 2,
    holdMs: 1,
    warmupGrants: 4,
    durationMs: 150,
    costContenders: [4, 8],
    costGrants: 12,
  },
  idle: { clients: 2, sessionTimeoutMs: 4000, holdMs: 500, warmAcquires: 2 },
  capacity: { clients: [1, 4], processes: 2, warmupMs: 100, durationMs: 300 },
  sessions: { sessions: 20, processes: 2, idleMs: 500, holders: 2, holdMs: 1_000 },
  heldLocks: { locks: 200, batch: 50 },
};

export const ALL_SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as const;

export interface BenchOptions {
  /** Measured rounds; each runs every scenario once per implementation, in shuffled order. */
  readonly rounds: number;
  /** Rounds run first and thrown away (JIT of the workers and of the server). */
  readonly warmupRounds: number;
  /** Before those, pipelined raw cycles for this long, so the server's JIT is hot (0: none). */
  readonly serverWarmupMs: number;
  readonly quick: boolean;
  readonly scenarios: readonly number[];
  /** For the server the benchmark starts; ignored with an existing server (ZK_CONNECT). */
  readonly forceSync: boolean;
  /** An existing server to use instead of starting one (ZK_CONNECT). */
  readonly connectionString?: string;
  /** That server's processes on this machine, if known (ZK_SERVER_PID): their CPU is reported. */
  readonly serverPids?: readonly number[];
  /**
   * The pass on a 3-server loopback ensemble (scenarios 1 and 2 of those selected): `also`
   * after the standalone pass, `only` instead of it, `no`. A full run does it by default.
   */
  readonly ensemble: 'no' | 'also' | 'only';
  /**
   * Each scenario in workers started (and warmed) for it alone, as JMH forks a JVM per
   * benchmark; otherwise one set of workers runs every scenario, round after round. In one
   * shared worker a scenario ran measurably slower after others (scenario 5, which sends no
   * request at all, took 3.96 µs per call there against 2.28 in a worker of its own).
   */
  readonly freshWorkers: boolean;
  /**
   * The one-way delays (ms) of the latency passes: scenarios 1, 2, 7 and 8 again (of those
   * selected) with every worker behind a delay proxy, one pass per delay; empty for none.
   */
  readonly latency: readonly number[];
  /** Only those latency passes, not the loopback (and ensemble) ones. */
  readonly latencyOnly: boolean;
  /**
   * The capacity pass (the capacity scenarios of those selected, on a 3-server loopback
   * ensemble or ZK_CONNECT's servers, sessions spread over every server): `also` after the
   * others, `only` instead of them, `no`. A full run, or a --scenario list naming one, does it.
   */
  readonly capacity: 'no' | 'also' | 'only';
  readonly counts: ScenarioCounts;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export const USAGE = `Usage: npm run bench -- [--rounds N] [--scenario 1,3] [--quick] [--no-sync] [--warmup N] [--ensemble]
       npm run bench -- --partitions [--quick]
       npm run bench -- --peers-only [--quick] [--latency LIST] [--peer LIST]

  --rounds N       measured rounds (default 9; 2 with --quick)
  --scenario LIST  only these scenarios (1 uncontended, 2 handoff, 3 queue drain,
                   4 many locks, 5 reentrant, 6 read-heavy, 7 multi-lock, 8 leases,
                   9 idle, 10 capacity: C clients on distinct locks, 11 many sessions,
                   12 many locks held);
                   default all
  --quick          tiny counts: checks the harness, measures nothing
  --no-sync        start ZooKeeper with forceSync=no (client-bound); default forceSync=yes
  --warmup N       unmeasured rounds first (default 1; 0 with --quick), after 5 s of
                   raw load to get the server's JIT hot (none with --quick or --warmup 0);
                   the Curator workers also run their recipes that long before round 1 (JIT)
  --ensemble       also run scenarios 1 and 2 (of those selected) on a 3-server loopback
                   ensemble; a full run (all scenarios, not --quick, no ZK_CONNECT) does so
                   unless --no-ensemble
  --ensemble-only  only that ensemble pass
  --fresh-workers  each scenario in workers started and warmed for it alone (as JMH
                   forks a JVM per benchmark), its rounds one after another; the default,
                   except with --quick
  --shared-workers one set of workers runs every scenario in turn, round after round
                   (a scenario then runs in a worker the ones before it have used)
  --latency LIST   one-way delays in ms of the latency passes (default 0.25,1): scenarios
                   1, 2, 7 and 8 (of those selected) again, every implementation reaching
                   the server through one delay proxy in a process of its own; none: skip
  --latency-only   only those latency passes
  --capacity       also run the capacity scenarios (10; of those selected) on a 3-server
                   loopback ensemble, sessions spread round-robin over the three servers
                   (or over ZK_CONNECT's servers); a full run, or --scenario naming one,
                   does so unless --no-capacity
  --capacity-only  only that capacity pass
  --partitions     only the partition pass: this library's Partitioner and Kazoo's
                   SetPartitioner, 64 parts over 5 member processes (8 over 3 with
                   --quick): parts moved and time with no owner on a join, a graceful
                   leave and a kill -9 (docs/bench/latest-partitions.md)
  --peers         also run the peers pass after the others: this library beside the Redis
                   locks (@sesamecare-oss/redlock on 1 and on 3 Redis servers, redis-semaphore,
                   @anchan828/nest-redlock, murlock) on redis-server and ZooKeeper servers it
                   starts: speed on loopback and at each --latency delay, and the fault trials
                   (pause, partition, restart, failover, long work; 20 each, 1 with --quick)
                   with PostgreSQL for the fenced writes (docs/bench/latest-peers.md)
  --peers-only     only the peers pass
  --peer LIST      the locks of the peers pass (default all): ours, redlock-1, redlock-3,
                   redis-semaphore, nest-redlock, murlock
  --render FILE    measure nothing: write docs/bench and docs/benchmarks.md again from a
                   results file of an earlier run, its targets judged by today's rules
                   (after a change to the report's layout or to a target)
  ZK_CONNECT=host:port  use that server instead of starting one (not for the ensemble pass;
                   the capacity pass spreads its sessions over every host:port listed)
  ZK_SERVER_PID=pid,…   its process(es) on this machine, to report the server's CPU as for one it starts`;

/** The scenarios the ensemble pass runs, of those selected. */
export const ENSEMBLE_SCENARIOS: readonly number[] = [1, 2];
/** The scenarios each latency pass runs, of those selected. */
export const LATENCY_SCENARIOS: readonly number[] = [1, 2, 7, 8];
/**
 * The scenarios the capacity pass runs, of those selected (and registered); no other pass
 * runs them.
 */
export const CAPACITY_SCENARIOS: readonly number[] = [10, 11, 12];
/** The one-way delays of the latency passes by default: a LAN's, and a slow LAN's or a zone apart. */
export const DEFAULT_LATENCY_MS: readonly number[] = [0.25, 1];

export function parseBenchArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions & {
  help: boolean;
  partitions: boolean;
  peers: 'no' | 'also' | 'only';
  peerIds?: PeerId[];
  render?: string;
} {
  let render: string | undefined;
  let rounds: number | undefined;
  let warmupRounds: number | undefined;
  let quick = false;
  let forceSync = true;
  let help = false;
  let freshWorkers: boolean | undefined;
  let ensemble: BenchOptions['ensemble'] | undefined;
  let scenarios: number[] = [...ALL_SCENARIOS];
  let latency: readonly number[] = DEFAULT_LATENCY_MS;
  let latencyOnly = false;
  let capacity: BenchOptions['capacity'] | undefined;
  let scenariosGiven = false;
  let partitions = false;
  let peers: 'no' | 'also' | 'only' = 'no';
  let peerIds: PeerId[] | undefined;
  const count = (flag: string, value: string | undefined, min: number): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`${flag} needs a whole number >= ${min}, not "${value}"\n\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    if (flag === '--rounds') rounds = count(flag, value(), 1);
    else if (flag === '--warmup') warmupRounds = count(flag, value(), 0);
    else if (flag === '--quick') quick = true;
    else if (flag === '--no-sync') forceSync = false;
    else if (flag === '--ensemble') ensemble = 'also';
    else if (flag === '--ensemble-only') ensemble = 'only';
    else if (flag === '--no-ensemble') ensemble = 'no';
    else if (flag === '--fresh-workers') freshWorkers = true;
    else if (flag === '--shared-workers') freshWorkers = false;
    else if (flag === '--latency') latency = parseDelays(value());
    else if (flag === '--latency-only') latencyOnly = true;
    else if (flag === '--capacity') capacity = 'also';
    else if (flag === '--capacity-only') capacity = 'only';
    else if (flag === '--no-capacity') capacity = 'no';
    else if (flag === '--partitions') partitions = true;
    else if (flag === '--peers') peers = 'also';
    else if (flag === '--peers-only') peers = 'only';
    else if (flag === '--peer') peerIds = parsePeers(value());
    else if (flag === '--scenario' || flag === '--scenarios') {
      const list = value() ?? '';
      scenariosGiven = true;
      scenarios = list.split(',').map((s) => count(flag, s.trim(), 1));
      const unknown = scenarios.filter((s) => !(ALL_SCENARIOS as readonly number[]).includes(s));
      if (unknown.length || scenarios.length === 0)
        throw new Error(`--scenario: no scenario ${unknown.join(', ') || '(none given)'}\n\n${USAGE}`);
    } else if (flag === '--render') render = value();
    else if (flag === '--help' || flag === '-h') help = true;
    else throw new Error(`unknown argument "${arg}"\n\n${USAGE}`);
  }
  const connectionString = env.ZK_CONNECT || undefined;
  const serverPids = (env.ZK_SERVER_PID ?? '')
    .split(',')
    .filter(Boolean)
    .map((pid) => {
      if (!/^\d+$/.test(pid)) throw new Error(`ZK_SERVER_PID: "${pid}" is not a process id\n\n${USAGE}`);
      return Number(pid);
    });
  const full = !quick && scenarios.length === ALL_SCENARIOS.length && !connectionString;
  ensemble ??= full ? 'also' : 'no';
  if (latencyOnly && (latency.length === 0 || !scenarios.some((s) => LATENCY_SCENARIOS.includes(s))))
    throw new Error(
      `--latency-only runs scenarios ${LATENCY_SCENARIOS.join(', ')} at the --latency delays: select one of each\n\n${USAGE}`,
    );
  const capacityScenario = scenarios.some((s) => CAPACITY_SCENARIOS.includes(s));
  capacity ??= full || (scenariosGiven && capacityScenario) ? 'also' : 'no';
  if (capacity === 'only' && !capacityScenario)
    throw new Error(
      `--capacity-only runs scenarios ${CAPACITY_SCENARIOS.filter((s) => (ALL_SCENARIOS as readonly number[]).includes(s)).join(', ')}: select one\n\n${USAGE}`,
    );
  if (latencyOnly && capacity === 'only') throw new Error(`--latency-only and --capacity-only: choose one\n\n${USAGE}`);
  if (latencyOnly) capacity = 'no';
  if (latencyOnly || capacity === 'only') ensemble = 'no';
  if (ensemble !== 'no' && !scenarios.some((s) => ENSEMBLE_SCENARIOS.includes(s))) {
    throw new Error(`--ensemble runs scenarios ${ENSEMBLE_SCENARIOS.join(' and ')}: select one of them\n\n${USAGE}`);
  }
  return {
    rounds: rounds ?? (quick ? 2 : 9),
    warmupRounds: warmupRounds ?? (quick ? 0 : 1),
    serverWarmupMs: quick || warmupRounds === 0 ? 0 : 5_000,
    quick,
    forceSync,
    scenarios: [...new Set(scenarios)].sort((a, b) => a - b),
    connectionString,
    ...(connectionString && serverPids.length ? { serverPids } : {}),
    ensemble,
    freshWorkers: freshWorkers ?? !quick,
    latency,
    latencyOnly,
    capacity,
    counts: quick ? QUICK_COUNTS : FULL_COUNTS,
    help,
    partitions,
    peers,
    ...(peerIds ? { peerIds } : {}),
    ...(render ? { render } : {}),
  };
}

/** `--peer ours,redlock-1`: the locks of the peers pass, each one of PEER_IDS. */
function parsePeers(list: string | undefined): PeerId[] {
  const ids = (list ?? '').split(',').map((item) => item.trim());
  const unknown = ids.filter((id) => !(PEER_IDS as readonly string[]).includes(id));
  if (!list || unknown.length)
    throw new Error(`--peer needs locks among ${PEER_IDS.join(', ')}, not "${unknown.join(', ') || list}"\n\n${USAGE}`);
  return [...new Set(ids)] as PeerId[];
}

/** `--latency 0.25,1`: one-way delays in ms, each > 0 and at most 1000; `none`: no latency pass. */
function parseDelays(list: string | undefined): number[] {
  if (list === 'none') return [];
  const delays = (list ?? '').split(',').map((item) => Number(item.trim()));
  if (!list || delays.some((ms) => !Number.isFinite(ms) || ms <= 0 || ms > 1000))
    throw new Error(
      `--latency needs one-way delays in ms (> 0, <= 1000) such as 0.25,1, or none, not "${list}"\n\n${USAGE}`,
    );
  return [...new Set(delays)].sort((a, b) => a - b);
}
