import type { ScenarioCounts } from './options.js';
import type { ClientCpuRow } from './support/cpu.js';
import type { DelayStats } from './support/delay-proxy.js';
import type { Counts, ImplName, OtherImpl } from './workers/impl.protocol.js';

/** One measured quantity across implementations and rounds. */
export interface MetricRow {
  /** Stable key, e.g. `uncontended.cyclesPerSec`. */
  readonly id: string;
  readonly scenario: number;
  readonly label: string;
  readonly unit: string;
  readonly better: 'higher' | 'lower';
  /** One value per measured round, in round order (rounds line up across implementations). */
  readonly rounds: Partial<Record<ImplName, number[]>>;
  readonly median: Partial<Record<ImplName, number>>;
  /**
   * ours ÷ other: the median over rounds of that round's ratio, each round's values having
   * been measured side by side, so a noisy stretch of time hits both alike.
   */
  readonly ratio: Partial<Record<OtherImpl, number>>;
  /** The lowest and highest per-round ratio: how much the machine's noise moved it. */
  readonly ratioRange: Partial<Record<OtherImpl, [number, number]>>;
}

/** Where round trips go: requests by op (and notifications) per unit of work. */
export interface RoundTripRow {
  readonly scenario: number;
  /** What one unit is: "uncontended cycle", "handoff (N=10)"… */
  readonly per: string;
  readonly impl: ImplName;
  /** Median over rounds, per unit, by op name; heartbeats left out. */
  readonly byOp: Counts;
  readonly requests: number;
  /** null where the implementation cannot count them (Kazoo outside scenarios 7 and 8). */
  readonly notifications: number | null;
}

export interface ScenarioSummary {
  readonly metrics: MetricRow[];
  readonly roundTrips: RoundTripRow[];
  /** Consistency problems found in the samples (e.g. a reentrant call that sent a request). */
  readonly problems: string[];
}

export interface TargetRow {
  readonly id: string;
  readonly label: string;
  /** The measured figure compared, as printed. */
  readonly measured: string;
  readonly threshold: string;
  /** null: not evaluated in this run (the reason is in `note`). */
  readonly pass: boolean | null;
  readonly note?: string;
}

export interface BenchMeta {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly runtimeSec: number;
  readonly argv: string[];
  readonly rounds: number;
  readonly warmupRounds: number;
  readonly serverWarmupMs: number;
  readonly quick: boolean;
  readonly scenarios: number[];
  readonly server: {
    readonly external: boolean;
    readonly forceSync: boolean | null;
    readonly tickTime: number | null;
    readonly jvmArgs: readonly string[] | null;
    readonly version: string;
    /** "standalone", or the ensemble the sessions used and the server they were all pinned to. */
    readonly topology?: string;
  };
  readonly versions: Partial<Record<ImplName, string>> & { readonly node: string };
  /** Which lib/ was measured: the commit, and how many files under lib/ differed from it (null: no git). */
  readonly source: { readonly commit: string | null; readonly libChangedFiles: number | null };
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly loadavgStart: number[];
    readonly loadavgEnd: number[];
  };
  /** How the orchestrator knew waiters were queued before a release (see queue-probe.ts). */
  readonly queueProbe: string;
  /** Each worker's clock read between two of the orchestrator's: CLOCK_MONOTONIC is shared. */
  readonly clockChecks: Array<{ readonly worker: string; readonly ok: boolean; readonly windowUs: number }>;
  /** Each scenario ran in workers of its own (`--fresh-workers`); absent in older results. */
  readonly freshWorkers?: boolean;
  /** The capacity pass: every server and its mode when the pass began (sessions are spread over them). */
  readonly servers?: ReadonlyArray<{ readonly address: string; readonly mode: string | null }>;
  /** The implementation order of every round, scenario and slice, as run. */
  readonly order: Array<{
    readonly round: number;
    readonly scenario: number;
    readonly slice: number;
    readonly impls: ImplName[];
  }>;
  /**
   * A latency pass only: the delay asked of the proxy, a read's median round trip direct and
   * through it (half the difference: the one-way delay a client saw), and the proxy's own account.
   */
  readonly network?: {
    readonly oneWayMs: number;
    readonly pingDirectUs: number;
    readonly pingProxiedUs: number;
    readonly addedOneWayUs: number;
    readonly proxy: DelayStats;
  };
}

export interface BenchResults {
  readonly schema: 1;
  /** `capacity`: the capacity pass's results, written apart from the loopback ones (absent otherwise). */
  readonly kind?: 'capacity';
  readonly meta: BenchMeta;
  readonly counts: ScenarioCounts;
  /** Every measured round's raw result, by scenario key and implementation. */
  readonly samples: Record<string, Partial<Record<ImplName, unknown[]>>>;
  readonly metrics: MetricRow[];
  readonly roundTrips: RoundTripRow[];
  /** How busy each implementation's client processes were, by scenario (absent in runs before it was measured). */
  readonly clientCpu?: ClientCpuRow[];
  readonly targets: TargetRow[];
  readonly problems: string[];
  /** The pass on a 3-server ensemble (scenarios 1 and 2), when run (`--ensemble`, or a full run). */
  readonly ensemble?: BenchResults;
}

/** The latency passes of one run (`--latency`), one per one-way delay, written apart from the loopback results. */
export interface LatencyResults {
  readonly schema: 1;
  readonly kind: 'latency';
  readonly passes: BenchResults[];
}
