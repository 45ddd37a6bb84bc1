import { notificationsOf, requestsOf } from '../support/request-counts.js';
import type { Counts, ReentrantResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type Scenario } from './scenario.js';

export interface ReentrantSample {
  readonly calls: number;
  readonly usPerCall: number;
  readonly counts: Counts;
  /** Requests (and notifications) sent by the nested calls: must be 0. */
  readonly sent: number;
}

/**
 * 5. `ReentrantLocker.withLock` nested inside a `withLock` on the same name: the cost of
 * one nested call, which must send nothing to ZooKeeper (the library's own counter must not
 * move; a liveness heartbeat on its timer is not a request of the call and is left out).
 */
export const reentrantScenario: Scenario<ReentrantSample> = {
  id: 5,
  key: 'reentrant',
  title: 'reentrant withLock inside a held lock',
  impls: ['ours'],
  slots: 1,

  async run(ctx, impl) {
    const { calls, warmup } = ctx.counts.reentrant;
    const result = await ctx
      .worker(impl)
      .request<ReentrantResult>('reentrant', { name: `reentrant-${ctx.round}`, calls, warmup });
    return {
      calls,
      usPerCall: result.elapsedNs / 1e3 / result.calls,
      counts: result.counts,
      sent: requestsOf(result.counts) + notificationsOf(result.counts),
    };
  },

  describe: (s) => `${s.usPerCall.toFixed(2)} µs/call, ${s.sent} requests sent`,

  summarize(samples) {
    const problems = (samples.ours ?? [])
      .filter((s) => s.sent > 0)
      .map((s) => `reentrant: ${s.calls} nested calls sent requests: ${JSON.stringify(s.counts)}`);
    return {
      metrics: [
        metricRow({
          id: 'reentrant.usPerCall',
          scenario: 5,
          label: 'reentrant withLock, nested',
          unit: 'µs/call',
          better: 'lower',
          rounds: byImpl(samples, (s) => s.usPerCall),
        }),
        metricRow({
          id: 'reentrant.requestsSent',
          scenario: 5,
          label: 'reentrant: requests sent by nested calls',
          unit: 'requests',
          better: 'lower',
          rounds: byImpl(samples, (s) => s.sent),
          ratios: false,
        }),
      ],
      roundTrips: roundTripRows(5, 'nested withLock', samples, (s) => ({ counts: s.counts, units: s.calls })),
      problems,
    };
  },
};
