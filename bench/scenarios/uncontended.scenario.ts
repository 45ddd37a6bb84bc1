import { addCounts } from '../support/request.counts.js';
import type { Counts, UncontendedResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type Scenario } from './scenario.js';

export interface UncontendedSample {
  readonly cycles: number;
  readonly elapsedNs: number;
  readonly cyclesPerSec: number;
  readonly counts: Counts;
}

/**
 * 1. One lock, nobody else: acquire + release in a serial loop, cycles per second. A round
 * is cut into slices (each a fresh session and name, with its own warm-up cycles); the
 * round's figure is all its cycles over all its timed time.
 */
export const uncontendedScenario: Scenario<UncontendedSample> = {
  id: 1,
  key: 'uncontended',
  title: 'uncontended acquire + release, one lock, serial',
  impls: ['ours', 'raw', 'kazoo', 'curator'],
  slots: 1,

  async run(ctx, impl, slice) {
    const { cycles, warmup } = ctx.counts.uncontended;
    const result = await ctx
      .worker(impl)
      .request<UncontendedResult>('uncontended', { name: `uncontended-${ctx.round}-${slice}`, cycles, warmup });
    return { ...result, cyclesPerSec: result.cycles / (result.elapsedNs / 1e9) };
  },

  slices: (counts) => counts.uncontended.slices,

  merge(parts) {
    const cycles = parts.reduce((n, p) => n + p.cycles, 0);
    const elapsedNs = parts.reduce((n, p) => n + p.elapsedNs, 0);
    return {
      cycles,
      elapsedNs,
      cyclesPerSec: cycles / (elapsedNs / 1e9),
      counts: parts.reduce((sum, p) => addCounts(sum, p.counts), {} as Counts),
    };
  },

  describe: (s) => `${s.cyclesPerSec.toFixed(0)} cycles/s`,

  summarize(samples) {
    return {
      metrics: [
        metricRow({
          id: 'uncontended.cyclesPerSec',
          scenario: 1,
          label: 'uncontended acquire+release',
          unit: 'cycles/s',
          better: 'higher',
          rounds: byImpl(samples, (s) => s.cyclesPerSec),
        }),
      ],
      roundTrips: roundTripRows(1, 'uncontended cycle', samples, (s) => ({ counts: s.counts, units: s.cycles })),
      problems: [],
    };
  },
};
