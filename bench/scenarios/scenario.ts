import type { ScenarioCounts } from '../options.js';
import type { MetricRow, RoundTripRow, ScenarioSummary } from '../results.js';
import { median } from '../support/sample-stats.js';
import type { QueueProbe } from '../support/queue-probe.js';
import { medianCounts, notificationsOf, perUnit, requestsOf } from '../support/request-counts.js';
import type { WorkerChannel } from '../support/worker-channel.js';
import { OTHER_IMPLS, type Counts, type ImplName } from '../workers/impl.protocol.js';

/** What a scenario run can use: its workers, the queue probe, and the counts. */
export interface ScenarioContext {
  readonly counts: ScenarioCounts;
  readonly probe: QueueProbe;
  /** "r3" for measured round 3, "w1" for warm-up round 1: part of lock names, so rounds never share a lock. */
  readonly round: string;
  /** The znode under which an implementation's locks live (its lock directories are `<base>/<name>`). */
  base(impl: ImplName): string;
  /** The ZooKeeper server processes the benchmark started or was told of (none for an unknown external server). */
  serverPids(): number[];
  /** The implementation's worker process: slot 0 for everything, slot 1 the second process of the handoff, … */
  worker(impl: ImplName, slot?: number): WorkerChannel;
  /** Every server of the run, with its mode when the pass began (the capacity pass spreads sessions over them). */
  readonly servers: readonly TargetServer[];
  /** The servers' CPU time so far (ns); null when their processes are not known. */
  serverCpuNs(): number | null;
}

/** One server of the run, as the scenarios see it. */
export interface TargetServer {
  /** A connection string naming this server alone. */
  readonly address: string;
  /** `leader`, `follower` or `standalone` from its `srvr` when the pass began; null if it did not say. */
  readonly mode: string | null;
  /** Its process's CPU time so far (ns); null when the benchmark did not start it. */
  cpuNs(): number | null;
}

export type SamplesByImpl<S> = Partial<Record<ImplName, S[]>>;

/** One scenario: how to run one round of it for one implementation, and how to sum it up. */
export interface Scenario<S = unknown> {
  readonly id: number;
  readonly key: string;
  readonly title: string;
  readonly impls: readonly ImplName[];
  /** Worker processes it needs per implementation, fixed or from the run's counts. */
  readonly slots: number | ((counts: ScenarioCounts) => number);
  run(ctx: ScenarioContext, impl: ImplName, slice: number): Promise<S>;
  /**
   * Into how many slices a round's run is cut (default 1). The runner runs slice 1 of every
   * implementation, then slice 2, …, each time in a fresh order, and `merge`s each one's
   * slices (also a single one): on a machine whose load comes in bursts, short turns spread
   * a burst over all.
   */
  slices?(counts: ScenarioCounts): number;
  merge?(parts: S[]): S;
  /** One line for the progress log. */
  describe(sample: S): string;
  summarize(samples: SamplesByImpl<S>): ScenarioSummary;
}

/**
 * A metric row with its medians and side-by-side ratios filled in. `ratios: false` for
 * counts (stalls, requests), where a ratio means nothing.
 */
export function metricRow(init: Omit<MetricRow, 'median' | 'ratio' | 'ratioRange'> & { ratios?: boolean }): MetricRow {
  const { ratios = true, ...row } = init;
  const medians: MetricRow['median'] = {};
  for (const [impl, values] of Object.entries(init.rounds) as Array<[ImplName, number[]]>)
    medians[impl] = median(values);
  const ratio: MetricRow['ratio'] = {};
  const ratioRange: MetricRow['ratioRange'] = {};
  const ours = init.rounds.ours;
  for (const other of OTHER_IMPLS) {
    const theirs = init.rounds[other];
    if (!ratios || !ours || !theirs) continue;
    const perRound = Array.from({ length: Math.min(ours.length, theirs.length) }, (_, i) => ours[i] / theirs[i]);
    ratio[other] = median(perRound);
    ratioRange[other] = [Math.min(...perRound), Math.max(...perRound)];
  }
  return { ...row, median: medians, ratio, ratioRange };
}

/** `values(sample)` per implementation, over rounds. */
export function byImpl<S>(
  samples: SamplesByImpl<S>,
  value: (sample: S) => number,
): Partial<Record<ImplName, number[]>> {
  const out: Partial<Record<ImplName, number[]>> = {};
  for (const [impl, list] of Object.entries(samples) as Array<[ImplName, S[]]>) out[impl] = list.map(value);
  return out;
}

/** Round-trip rows: each implementation's counts per unit, medians over rounds. */
export function roundTripRows<S>(
  scenario: number,
  per: string,
  samples: SamplesByImpl<S>,
  countsOf: (sample: S) => { counts: Counts; units: number },
  // Kazoo's are counted in scenarios 7 and 8 only (they pass () => true); Curator's always.
  canCountNotifications: (impl: ImplName) => boolean = (impl) => impl !== 'kazoo',
): RoundTripRow[] {
  return (Object.entries(samples) as Array<[ImplName, S[]]>).map(([impl, list]) => {
    const byOp = medianCounts(
      list.map((sample) => {
        const { counts, units } = countsOf(sample);
        return perUnit(counts, units);
      }),
      median,
    );
    return {
      scenario,
      per,
      impl,
      byOp,
      requests: requestsOf(byOp),
      notifications: canCountNotifications(impl) ? notificationsOf(byOp) : null,
    };
  });
}
