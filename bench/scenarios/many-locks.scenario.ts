import type { Counts, ManyLocksResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type Scenario } from './scenario.js';

export interface ManyLocksSample {
  readonly locks: number;
  readonly cycles: number;
  readonly cyclesPerSec: number;
  readonly counts: Counts;
  readonly heapPerLockBytes: number | null;
}

/**
 * 4. L distinct locks from one client (one session) at once, each acquired and released
 * `cyclesPerLock` times in a row: cycles per second. Then, for this library, L locks held
 * at once: heapUsed after full GCs minus before, per lock, in a probe process of its own
 * (bench/impl/ours-heap.probe.ts), so that no forced GC cools the worker's JIT.
 * The library starts from cold names (it creates its directories itself, as in use); the
 * raw floor's directories are made before timing.
 */
export const manyLocksScenario: Scenario<ManyLocksSample> = {
  id: 4,
  key: 'manyLocks',
  title: 'many distinct locks at once from one process',
  impls: ['ours', 'raw'],
  slots: 1,

  async run(ctx, impl) {
    const { locks, cyclesPerLock } = ctx.counts.manyLocks;
    const result = await ctx.worker(impl).request<ManyLocksResult>('manyLocks', {
      prefix: `many-${ctx.round}`,
      locks,
      cyclesPerLock,
      measureMemory: impl === 'ours',
    });
    return {
      locks,
      cycles: result.cycles,
      cyclesPerSec: result.cycles / (result.elapsedNs / 1e9),
      counts: result.counts,
      heapPerLockBytes: result.heapPerLockBytes,
    };
  },

  describe: (s) =>
    `${s.cyclesPerSec.toFixed(0)} cycles/s` +
    (s.heapPerLockBytes === null ? '' : `, ${(s.heapPerLockBytes / 1024).toFixed(2)} KB/held lock`),

  summarize(samples) {
    const locks = Object.values(samples).flat()[0]?.locks ?? 0;
    const ours = samples.ours?.filter((s) => s.heapPerLockBytes !== null) ?? [];
    return {
      metrics: [
        metricRow({
          id: 'manyLocks.cyclesPerSec',
          scenario: 4,
          label: `${locks} locks at once`,
          unit: 'cycles/s',
          better: 'higher',
          rounds: byImpl(samples, (s) => s.cyclesPerSec),
        }),
        ...(ours.length
          ? [
              metricRow({
                id: 'manyLocks.heapPerLockKB',
                scenario: 4,
                label: `heap per held lock (${locks} held)`,
                unit: 'KB/lock',
                better: 'lower',
                rounds: { ours: ours.map((s) => s.heapPerLockBytes! / 1024) },
              }),
            ]
          : []),
      ],
      roundTrips: roundTripRows(4, `cycle (${locks} locks at once)`, samples, (s) => ({
        counts: s.counts,
        units: s.cycles,
      })),
      problems: [],
    };
  },
};
