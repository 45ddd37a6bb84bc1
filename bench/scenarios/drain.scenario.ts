import type { MetricRow, RoundTripRow } from '../results.js';
import { addCounts, notificationsOf, requestsOf } from '../support/request-counts.js';
import { median } from '../support/sample-stats.js';
import type { Counts, DrainGoResult, ImplName } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type SamplesByImpl, type Scenario } from './scenario.js';

export interface DrainRun {
  readonly waiters: number;
  /** The median of the round's drains of this size. */
  readonly drainMs: number;
  /** Each drain of the round, in the order run. */
  readonly drainsMs: number[];
  /** Summed over every session in the queue, over all the round's drains of this size. */
  readonly counts: Counts;
}

export interface DrainSample {
  readonly runs: DrainRun[];
}

/**
 * 3. A holder and N waiters, each in its own session, all queued on one lock (checked in
 * the server's watch table) before the holder releases; each waiter releases as soon as it
 * is granted. Drain time: the holder's release call to the last waiter's release done.
 * Requests and notifications per handoff must not grow with N (no herd effect). A round
 * drains each size `slices` times, implementations taking turns; its figure is the median.
 */
export const drainScenario: Scenario<DrainSample> = {
  id: 3,
  key: 'drain',
  title: 'N waiters queued on one lock: drain',
  impls: ['ours', 'raw', 'kazoo', 'curator'],
  slots: 1,

  async run(ctx, impl, slice) {
    const runs: DrainRun[] = [];
    for (const waiters of ctx.counts.drain.waiters) {
      const name = `drain${waiters}-${ctx.round}-${slice}`;
      const worker = ctx.worker(impl);
      await worker.request('drain.setup', { name, waiters });
      await ctx.probe.waitQueued(`${ctx.base(impl)}/${name}`, waiters + 1, waiters);
      const { drainNs, counts } = await worker.request<DrainGoResult>('drain.go');
      runs.push({ waiters, drainMs: drainNs / 1e6, drainsMs: [drainNs / 1e6], counts });
    }
    return { runs };
  },

  slices: (counts) => counts.drain.slices,

  merge(parts) {
    return {
      runs: parts[0].runs.map(({ waiters }) => {
        const same = parts.map((p) => p.runs.find((r) => r.waiters === waiters)!);
        const drainsMs = same.flatMap((r) => r.drainsMs);
        return {
          waiters,
          drainMs: median(drainsMs),
          drainsMs,
          counts: same.reduce((sum, r) => addCounts(sum, r.counts), {} as Counts),
        };
      }),
    };
  },

  describe: (s) =>
    s.runs
      .map((r) => `N=${r.waiters} ${r.drainMs.toFixed(1)} ms, ${perHandoff(r).toFixed(2)} req+notif/handoff`)
      .join('; '),

  summarize(samples) {
    const sizes = [
      ...new Set(Object.values(samples).flatMap((list) => list!.flatMap((s) => s.runs.map((r) => r.waiters)))),
    ].sort((a, b) => a - b);
    const metrics: MetricRow[] = [];
    const roundTrips: RoundTripRow[] = [];
    for (const n of sizes) {
      const runsOf = of(samples, n);
      metrics.push(
        metricRow({
          id: `drain.${n}.drainMs`,
          scenario: 3,
          label: `drain ${n} waiters`,
          unit: 'ms',
          better: 'lower',
          rounds: byImpl(runsOf, (r) => r.drainMs),
        }),
        metricRow({
          id: `drain.${n}.perHandoffUs`,
          scenario: 3,
          label: `drain ${n} waiters, per handoff`,
          unit: 'µs',
          better: 'lower',
          rounds: byImpl(runsOf, (r) => (r.drainMs * 1e3) / r.waiters),
        }),
      );
      const ours = runsOf.ours;
      if (ours) {
        metrics.push(
          metricRow({
            id: `drain.${n}.reqNotifPerHandoff`,
            scenario: 3,
            label: `drain ${n} waiters, requests+notifications per handoff`,
            unit: '/handoff',
            better: 'lower',
            rounds: { ours: ours.map(perHandoff) },
            ratios: false,
          }),
        );
      }
      roundTrips.push(
        ...roundTripRows(3, `handoff (drain, N=${n})`, runsOf, (r) => ({ counts: r.counts, units: handoffsOf(r) })),
      );
    }
    return { metrics, roundTrips, problems: [] };
  },
};

/** The runs with `n` waiters, per implementation. */
function of(samples: SamplesByImpl<DrainSample>, n: number): SamplesByImpl<DrainRun> {
  const out: SamplesByImpl<DrainRun> = {};
  for (const [impl, list] of Object.entries(samples) as Array<[ImplName, DrainSample[]]>) {
    out[impl] = list.map((s) => s.runs.find((r) => r.waiters === n)!).filter(Boolean);
  }
  return out;
}

/** Handoffs the counts cover: N per drain. */
function handoffsOf(run: DrainRun): number {
  return run.waiters * run.drainsMs.length;
}

/** Requests plus watch notifications, per handoff. */
export function perHandoff(run: DrainRun): number {
  return (requestsOf(run.counts) + notificationsOf(run.counts)) / handoffsOf(run);
}
