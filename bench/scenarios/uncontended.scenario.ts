import { addCounts } from '../support/request.counts.js';
import type { Counts, UncontendedResult } from '../workers/impl.protocol.js';
import type { MetricRow } from '../bench.results.js';
import { byImpl, metricRow, roundTripRows, type SamplesByImpl, type Scenario } from './scenario.js';

/** The metric of the raw pipelined cycles (`pipelinedFloor`). */
export const UNCONTENDED_FLOOR = 'uncontended.rawPipelinedCyclesPerSec';

export interface UncontendedSample {
  readonly cycles: number;
  readonly elapsedNs: number;
  readonly cyclesPerSec: number;
  readonly counts: Counts;
  /** Raw only: the same cycles with the read sent behind the create (the floor for ours' requests). */
  readonly pipelined?: { readonly cycles: number; readonly elapsedNs: number };
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
    const pipelined = parts.every((p) => p.pipelined)
      ? {
          cycles: parts.reduce((n, p) => n + p.pipelined!.cycles, 0),
          elapsedNs: parts.reduce((n, p) => n + p.pipelined!.elapsedNs, 0),
        }
      : undefined;
    return {
      cycles,
      elapsedNs,
      cyclesPerSec: cycles / (elapsedNs / 1e9),
      counts: parts.reduce((sum, p) => addCounts(sum, p.counts), {} as Counts),
      ...(pipelined && { pipelined }),
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
        ...pipelinedFloor(samples),
      ],
      roundTrips: roundTripRows(1, 'uncontended cycle', samples, (s) => ({ counts: s.counts, units: s.cycles })),
      problems: [],
    };
  },
};

/**
 * The raw loop's cycles with the read sent behind the create, as ours sends it: what any
 * client whose `release()` answers after its delete is committed can reach, measured in the
 * same slices as the others (see target 1c's floor).
 */
function pipelinedFloor(samples: SamplesByImpl<UncontendedSample>): MetricRow[] {
  const raw = samples.raw?.map((s) => s.pipelined);
  if (!raw?.length || raw.some((p) => !p)) return [];
  return [
    metricRow({
      id: UNCONTENDED_FLOOR,
      scenario: 1,
      label: 'uncontended, raw sending the read behind the create (as ours)',
      unit: 'cycles/s',
      better: 'higher',
      rounds: { raw: raw.map((p) => p!.cycles / (p!.elapsedNs / 1e9)) },
      ratios: false,
    }),
  ];
}
