import { addCounts } from '../support/request-counts.js';
import type { Counts, UncontendedResult } from '../workers/impl.protocol.js';
import type { MetricRow } from '../results.js';
import { byImpl, metricRow, roundTripRows, type SamplesByImpl, type Scenario } from './scenario.js';

/** The metric of the raw pipelined cycles (`floorRows`). */
export const UNCONTENDED_FLOOR = 'uncontended.rawPipelinedCyclesPerSec';
/** The metric of the same cycles on a session spoken by hand, no client library (`floorRows`). */
export const UNCONTENDED_WIRE_FLOOR = 'uncontended.wireCyclesPerSec';

type Timed = { readonly cycles: number; readonly elapsedNs: number };

export interface UncontendedSample {
  readonly cycles: number;
  readonly elapsedNs: number;
  readonly cyclesPerSec: number;
  readonly counts: Counts;
  /** Raw only: the same cycles with the read sent behind the create (the floor for ours' requests). */
  readonly pipelined?: Timed;
  /** Raw only: those cycles again on a session spoken by hand (`WireSession`): the wire floor. */
  readonly wire?: Timed;
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
    const pipelined = sumTimed(parts.map((p) => p.pipelined));
    const wire = sumTimed(parts.map((p) => p.wire));
    return {
      cycles,
      elapsedNs,
      cyclesPerSec: cycles / (elapsedNs / 1e9),
      counts: parts.reduce((sum, p) => addCounts(sum, p.counts), {} as Counts),
      ...(pipelined && { pipelined }),
      ...(wire && { wire }),
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
        ...floorRows(samples),
      ],
      roundTrips: roundTripRows(1, 'uncontended cycle', samples, (s) => ({ counts: s.counts, units: s.cycles })),
      problems: [],
    };
  },
};

/** Every slice's timed cycles added up, if every slice has them. */
function sumTimed(parts: ReadonlyArray<Timed | undefined>): Timed | undefined {
  if (!parts.every((p) => p)) return undefined;
  return {
    cycles: parts.reduce((n, p) => n + p!.cycles, 0),
    elapsedNs: parts.reduce((n, p) => n + p!.elapsedNs, 0),
  };
}

/**
 * Raw's two floors, measured in the same slices as the others (see targets 1f and 1g):
 * its loop with the read sent behind the create, as ours sends it, what any client whose
 * `release()` answers after its delete is committed can reach on node-zookeeper-client;
 * and the same requests on a session spoken by hand, what any Node client can reach.
 */
function floorRows(samples: SamplesByImpl<UncontendedSample>): MetricRow[] {
  const floor = (id: string, label: string, pick: (s: UncontendedSample) => Timed | undefined): MetricRow[] => {
    const raw = samples.raw?.map(pick);
    if (!raw?.length || raw.some((p) => !p)) return [];
    const rounds = { raw: raw.map((p) => p!.cycles / (p!.elapsedNs / 1e9)) };
    return [metricRow({ id, scenario: 1, label, unit: 'cycles/s', better: 'higher', rounds, ratios: false })];
  };
  return [
    ...floor(UNCONTENDED_FLOOR, 'uncontended, raw sending the read behind the create (as ours)', (s) => s.pipelined),
    ...floor(
      UNCONTENDED_WIRE_FLOOR,
      'uncontended, the same requests spoken by hand on a bare socket (no client library)',
      (s) => s.wire,
    ),
  ];
}
