import { addCounts } from '../support/request-counts.js';
import { mean, nsBetween, percentile } from '../support/sample-stats.js';
import type { Counts, HandoffCloseResult, HoldResult, ReleaseResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type Scenario } from './scenario.js';

export interface HandoffSample {
  readonly handoffs: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  readonly meanUs: number;
  /** Both processes, over every handoff including the unmeasured warm-up ones. */
  readonly counts: Counts;
  readonly countedHandoffs: number;
}

/**
 * 2. Two processes pass one lock back and forth. For each handoff the orchestrator has the
 * waiter queue (node created, watch on the holder's node set, checked in the server's
 * watch table), then tells the holder to release. Latency = the waiter's clock right after
 * its acquire returned − the holder's clock right before its release call, both
 * CLOCK_MONOTONIC on this machine (see impl.protocol.ts).
 */
export const handoffScenario: Scenario<HandoffSample> = {
  id: 2,
  key: 'handoff',
  title: 'contended handoff between two processes',
  impls: ['ours', 'raw', 'kazoo', 'curator'],
  slots: 2,

  async run(ctx, impl) {
    const { handoffs, warmup } = ctx.counts.handoff;
    const name = `handoff-${ctx.round}`;
    const dir = `${ctx.base(impl)}/${name}`;
    const a = ctx.worker(impl, 0);
    const b = ctx.worker(impl, 1);
    await Promise.all([a.request('handoff.open', { name }), b.request('handoff.open', { name })]);
    await a.request<HoldResult>('handoff.hold', { name });
    let [holder, waiter] = [a, b];
    const latencies: number[] = [];
    for (let i = 0; i < warmup + handoffs; i++) {
      const granted = waiter.request<HoldResult>('handoff.hold', { name });
      granted.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
      await ctx.probe.waitQueued(dir, 2, 1);
      const { releasedAt } = await holder.request<ReleaseResult>('handoff.release');
      const { grantedAt } = await granted;
      if (i >= warmup) latencies.push(nsBetween(releasedAt, grantedAt) / 1e3);
      [holder, waiter] = [waiter, holder];
    }
    await holder.request('handoff.release');
    const closed = await Promise.all([
      a.request<HandoffCloseResult>('handoff.close'),
      b.request<HandoffCloseResult>('handoff.close'),
    ]);
    return {
      handoffs: latencies.length,
      p50Us: percentile(latencies, 50),
      p90Us: percentile(latencies, 90),
      p99Us: percentile(latencies, 99),
      maxUs: Math.max(...latencies),
      meanUs: mean(latencies),
      counts: closed.reduce((sum, c) => addCounts(sum, c.counts), {} as Counts),
      countedHandoffs: warmup + handoffs,
    };
  },

  describe: (s) => `p50 ${s.p50Us.toFixed(0)} µs, p99 ${s.p99Us.toFixed(0)} µs`,

  summarize(samples) {
    const row = (id: string, label: string, value: (s: HandoffSample) => number) =>
      metricRow({ id, scenario: 2, label, unit: 'µs', better: 'lower', rounds: byImpl(samples, value) });
    return {
      metrics: [
        row('handoff.p50Us', 'handoff latency p50', (s) => s.p50Us),
        row('handoff.p99Us', 'handoff latency p99', (s) => s.p99Us),
      ],
      roundTrips: roundTripRows(2, 'handoff (both sides, incl. re-queue)', samples, (s) => ({
        counts: s.counts,
        units: s.countedHandoffs,
      })),
      problems: [],
    };
  },
};
