import type { MetricRow } from '../results.js';
import { notificationsOf, requestsOf } from '../support/request-counts.js';
import type { Counts, ImplName } from '../workers/impl.protocol.js';
import type { LeasesResult } from '../workers/recipe-ops.protocol.js';
import { byImpl, metricRow, roundTripRows, type SamplesByImpl, type Scenario } from './scenario.js';

export interface LeasesRun {
  readonly contenders: number;
  readonly grants: number;
  readonly elapsedNs: number;
  readonly grantsPerSec: number;
  readonly counts: Counts;
  readonly maxHolding: number;
}

export interface LeasesSample {
  readonly maxLeases: number;
  readonly holdMs: number;
  /** `contenders` sessions for `durationMs`: grants per second. */
  readonly throughput: LeasesRun;
  /** One run per size of `costContenders`, a fixed number of grants each: what a grant costs. */
  readonly cost: LeasesRun[];
}

/**
 * 8. A counting semaphore of `maxLeases`: C contenders, each its own session, loop acquire
 * a lease → hold `holdMs` → release. Grants per second over a fixed time (ours'
 * `acquireLease` against Kazoo's `Semaphore` and Curator's `InterProcessSemaphoreV2`),
 * then, for each N of `costContenders`, the requests sent and watch notifications received
 * per grant over a fixed number of grants: flat in N means no herd. Every window opens
 * after warm-up grants (as many as contenders for the cost runs), so it measures the
 * steady state, not the first queueing.
 */
export const leasesScenario: Scenario<LeasesSample> = {
  id: 8,
  key: 'leases',
  title: 'lease semaphore: C contenders, maxLeases leases',
  impls: ['ours', 'kazoo', 'curator'],
  slots: 1,

  async run(ctx, impl) {
    const c = ctx.counts.leases;
    const worker = ctx.worker(impl);
    const leases = async (tag: string, contenders: number, window: object): Promise<LeasesRun> => {
      const params = {
        name: `leases-${tag}-${ctx.round}`,
        contenders,
        maxLeases: c.maxLeases,
        holdMs: c.holdMs,
        ...window,
      };
      const r = await worker.request<LeasesResult>('leases', params);
      return { contenders, ...r, grantsPerSec: r.grants / (r.elapsedNs / 1e9) };
    };
    const throughput = await leases('rate', c.contenders, { warmupGrants: c.warmupGrants, durationMs: c.durationMs });
    const cost: LeasesRun[] = [];
    for (const n of c.costContenders) cost.push(await leases(`n${n}`, n, { warmupGrants: n, grants: c.costGrants }));
    return { maxLeases: c.maxLeases, holdMs: c.holdMs, throughput, cost };
  },

  describe: (s) =>
    `${s.throughput.grantsPerSec.toFixed(0)} grants/s (C=${s.throughput.contenders}); ` +
    s.cost.map((r) => `N=${r.contenders} ${perGrant(r).toFixed(2)} req+notif/grant`).join(', '),

  summarize(samples) {
    const first = Object.values(samples).flat()[0];
    if (!first) return { metrics: [], roundTrips: [], problems: [] };
    const { maxLeases, holdMs, throughput } = first;
    const rate = byRun(samples, (s) => s.throughput);
    const metrics: MetricRow[] = [
      metricRow({
        id: 'leases.grantsPerSec',
        scenario: 8,
        label: `${throughput.contenders} contenders, ${maxLeases} leases, hold ${holdMs} ms: grants`,
        unit: 'grants/s',
        better: 'higher',
        rounds: byImpl(rate, (r) => r.grantsPerSec),
      }),
    ];
    const roundTrips = roundTripRows(
      8,
      `grant (C=${throughput.contenders}, timed run)`,
      rate,
      perGrantUnits,
      () => true,
    );
    for (const { contenders: n } of first.cost) {
      const runs = byRun(samples, (s) => s.cost.find((r) => r.contenders === n));
      metrics.push(
        metricRow({
          id: `leases.${n}.reqNotifPerGrant`,
          scenario: 8,
          label: `${n} contenders: requests+notifications per grant`,
          unit: '/grant',
          better: 'lower',
          rounds: byImpl(runs, perGrant),
          ratios: false,
        }),
      );
      roundTrips.push(...roundTripRows(8, `grant (N=${n})`, runs, perGrantUnits, () => true));
    }
    return { metrics, roundTrips, problems: problemsOf(samples) };
  },
};

/** One run of each sample, per implementation (samples without it left out). */
function byRun(
  samples: SamplesByImpl<LeasesSample>,
  pick: (s: LeasesSample) => LeasesRun | undefined,
): SamplesByImpl<LeasesRun> {
  const out: SamplesByImpl<LeasesRun> = {};
  for (const [impl, list] of Object.entries(samples) as Array<[ImplName, LeasesSample[]]>) {
    out[impl] = list.map(pick).filter((r): r is LeasesRun => r !== undefined);
  }
  return out;
}

const perGrantUnits = (r: LeasesRun): { counts: Counts; units: number } => ({ counts: r.counts, units: r.grants });

/** Requests sent plus watch notifications received, per grant, over every session. */
export function perGrant(r: LeasesRun): number {
  return (requestsOf(r.counts) + notificationsOf(r.counts)) / r.grants;
}

/** More holders at once than leases, or a window without a grant: the run measured nothing sound. */
function problemsOf(samples: SamplesByImpl<LeasesSample>): string[] {
  const problems: string[] = [];
  for (const [impl, list] of Object.entries(samples) as Array<[ImplName, LeasesSample[]]>) {
    for (const s of list) {
      for (const r of [s.throughput, ...s.cost]) {
        if (r.maxHolding > s.maxLeases)
          problems.push(
            `leases, ${impl}, C=${r.contenders}: ${r.maxHolding} leases held at once, ${s.maxLeases} allowed`,
          );
        if (r.grants === 0) problems.push(`leases, ${impl}, C=${r.contenders}: no grant in the measured window`);
      }
    }
  }
  return problems;
}
