import { median } from '../support/sample-stats.js';
import type { IdleResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, type Scenario } from './scenario.js';

export interface IdleSample {
  readonly clients: number;
  /** Transactions per second per idle session. */
  readonly idlePerClientPerSec: number;
  /** Transactions per second of the one session holding a lock. */
  readonly holderPerSec: number;
  readonly afterIdleMs: number;
  readonly warmMs: number;
}

/**
 * 9. What the liveness proof costs the ensemble: transactions committed (every server logs
 * and fsyncs each one) per idle session and per holding session, counted by the server's
 * zxid; and what the first acquire after idle costs against a warm one, side by side on the
 * same sessions in the same round.
 */
export const idleScenario: Scenario<IdleSample> = {
  id: 9,
  key: 'idle',
  title: 'idle and holding sessions: transactions, and the acquire after idle',
  impls: ['ours'],
  slots: 1,

  async run(ctx, impl) {
    const { clients, sessionTimeoutMs, holdMs, warmAcquires } = ctx.counts.idle;
    const result = await ctx
      .worker(impl)
      .request<IdleResult>('idle', { name: `idle-${ctx.round}`, clients, sessionTimeoutMs, holdMs, warmAcquires });
    return {
      clients,
      idlePerClientPerSec: result.idleTransactions / clients / (result.idleMs / 1000),
      holderPerSec: result.holdTransactions / (result.holdMs / 1000),
      afterIdleMs: median(result.afterIdleNs) / 1e6,
      warmMs: median(result.warmNs) / 1e6,
    };
  },

  describe: (s) =>
    `${s.idlePerClientPerSec.toFixed(2)} tx/s per idle session, ${s.holderPerSec.toFixed(1)} tx/s holding; ` +
    `acquire after idle ${s.afterIdleMs.toFixed(2)} ms, warm ${s.warmMs.toFixed(2)} ms`,

  summarize(samples) {
    const row = (id: string, label: string, unit: string, value: (s: IdleSample) => number) =>
      metricRow({
        id: `idle.${id}`,
        scenario: 9,
        label,
        unit,
        better: 'lower',
        rounds: byImpl(samples, value),
        ratios: false,
      });
    return {
      metrics: [
        row('txPerIdleSessionPerSec', 'idle session: transactions', 'tx/s', (s) => s.idlePerClientPerSec),
        row('txPerHolderPerSec', 'holding session: transactions', 'tx/s', (s) => s.holderPerSec),
        row('acquireAfterIdleMs', 'first acquire after idle, p50', 'ms', (s) => s.afterIdleMs),
        row('acquireWarmMs', 'acquire right after a release, p50', 'ms', (s) => s.warmMs),
        row('afterIdleOverWarm', 'acquire after idle ÷ warm (same round)', '×', (s) => s.afterIdleMs / s.warmMs),
      ],
      roundTrips: [],
      // Not a problem when above 0: a server the benchmark did not start may take others' writes meanwhile.
      problems: [],
    };
  },
};
