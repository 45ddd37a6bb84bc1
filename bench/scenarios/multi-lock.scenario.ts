import type { MetricRow } from '../results.js';
import { addCounts } from '../support/request-counts.js';
import { median } from '../support/sample-stats.js';
import type { Counts, ImplName } from '../workers/impl.protocol.js';
import type { MultiLockResult, MultiLockVariant, MultiLockVariantRun } from '../workers/recipe-ops.protocol.js';
import { byImpl, metricRow, roundTripRows, type SamplesByImpl, type Scenario } from './scenario.js';

export interface MultiLockVariantSample {
  readonly cycles: number;
  readonly p50Us: number;
  /** Every measured cycle of a slice, whole µs: for the merge, which drops them from the round's sample (JSON size). */
  readonly latenciesUs?: number[];
  readonly counts: Counts;
}

export interface MultiLockSample {
  readonly locks: number;
  readonly variants: Partial<Record<MultiLockVariant, MultiLockVariantSample>>;
}

/**
 * 7. `locks` free names from one session, acquired and released as a group: ours with
 * `acquireAll` (the requests for every name travel together), against each name taken one
 * after another (Kazoo's only way; Curator's InterProcessMultiLock does the same; released
 * in reverse order), and against a single name. *raw* sends acquireAll's requests with
 * plain callbacks (every create and children read at once, then every delete): the floor of
 * a group, and of its ratio to one name. Ours runs all, one and in turn; raw all and one;
 * Kazoo in turn and one; Curator all (InterProcessMultiLock), in turn (by hand) and one.
 * Each implementation's variants run in turns, a fresh order each cycle, so `group ÷ one
 * name` is a same-moment ratio; implementations are interleaved by slices, as in scenario 1.
 */
export const multiLockScenario: Scenario<MultiLockSample> = {
  id: 7,
  key: 'multiLock',
  title: 'several free locks as a group (multi-lock)',
  impls: ['ours', 'raw', 'kazoo', 'curator'],
  slots: 1,

  async run(ctx, impl, slice) {
    const { locks, cycles, warmup } = ctx.counts.multiLock;
    const result = await ctx
      .worker(impl)
      .request<MultiLockResult>('multiLock', { prefix: `multi-${ctx.round}-${slice}`, locks, cycles, warmup });
    const variants: MultiLockSample['variants'] = {};
    for (const [variant, run] of Object.entries(result.variants) as Array<[MultiLockVariant, MultiLockVariantRun]>) {
      variants[variant] = variantSample(
        run.latenciesNs.map((ns) => Math.round(ns / 1e3)),
        run.counts,
      );
    }
    return { locks, variants };
  },

  slices: (counts) => counts.multiLock.slices,

  merge(parts) {
    const variants: MultiLockSample['variants'] = {};
    for (const variant of Object.keys(parts[0].variants) as MultiLockVariant[]) {
      const same = parts.map((p) => p.variants[variant]!);
      const { latenciesUs: _latencies, ...merged } = variantSample(
        same.flatMap((s) => s.latenciesUs ?? []),
        same.reduce((sum, s) => addCounts(sum, s.counts), {} as Counts),
      );
      variants[variant] = merged;
    }
    return { locks: parts[0].locks, variants };
  },

  describe: (s) =>
    (Object.entries(s.variants) as Array<[MultiLockVariant, MultiLockVariantSample]>)
      .map(([variant, v]) => `${variant} p50 ${(v.p50Us / 1e3).toFixed(2)} ms`)
      .join(', '),

  summarize(samples) {
    const locks = Object.values(samples).flat()[0]?.locks ?? 0;
    const of = (variants: Partial<Record<ImplName, MultiLockVariant>>): SamplesByImpl<MultiLockVariantSample> => {
      const out: SamplesByImpl<MultiLockVariantSample> = {};
      for (const [impl, variant] of Object.entries(variants) as Array<[ImplName, MultiLockVariant]>) {
        const list = samples[impl]
          ?.map((s) => s.variants[variant])
          .filter((v): v is MultiLockVariantSample => v !== undefined);
        if (list?.length) out[impl] = list;
      }
      return out;
    };
    const group = of({ ours: 'all', raw: 'all', kazoo: 'seq', curator: 'all' });
    const one = of({ ours: 'one', raw: 'one', kazoo: 'one', curator: 'one' });
    const inTurn = of({ ours: 'seq', kazoo: 'seq', curator: 'seq' });
    const p50 = (s: MultiLockVariantSample): number => s.p50Us;
    const row = (id: string, label: string, rounds: SamplesByImpl<MultiLockVariantSample>): MetricRow =>
      metricRow({ id, scenario: 7, label, unit: 'µs', better: 'lower', rounds: byImpl(rounds, p50) });
    // Same-moment ratios of one implementation's own variants: the per-round quotient of its p50s.
    const ownRatio = (id: string, label: string, over: MultiLockVariant, impls: readonly ImplName[]): MetricRow[] => {
      const rounds: Partial<Record<ImplName, number[]>> = {};
      for (const impl of impls) {
        const list = (samples[impl] ?? [])
          .filter((s) => s.variants.all && s.variants[over])
          .map((s) => s.variants.all!.p50Us / s.variants[over]!.p50Us);
        if (list.length) rounds[impl] = list;
      }
      return rounds.ours
        ? [metricRow({ id, scenario: 7, label, unit: '×', better: 'lower', rounds, ratios: false })]
        : [];
    };
    const trips = (per: string, rounds: SamplesByImpl<MultiLockVariantSample>) =>
      roundTripRows(
        7,
        per,
        rounds,
        (s) => ({ counts: s.counts, units: s.cycles }),
        () => true,
      );
    return {
      metrics: [
        row(
          'multiLock.groupP50Us',
          `${locks} free names as a group, p50 (ours acquireAll; raw its requests; Kazoo ${locks} Locks in turn; Curator InterProcessMultiLock)`,
          group,
        ),
        row('multiLock.oneP50Us', '1 free name: acquire + release, p50', one),
        row('multiLock.inTurnP50Us', `${locks} free names, one acquire after another, p50`, inTurn),
        ...ownRatio(
          'multiLock.groupOverOne',
          `group of ${locks} ÷ 1 name, same cycles (ours acquireAll; raw floor)`,
          'one',
          ['ours', 'raw'],
        ),
        ...ownRatio(
          'multiLock.groupOverInTurn',
          `acquireAll of ${locks} ÷ ${locks} in turn, same cycles (ours)`,
          'seq',
          ['ours'],
        ),
      ],
      roundTrips: [
        ...trips(
          `${locks} names as a group + release (ours acquireAll; Kazoo in turn; Curator InterProcessMultiLock)`,
          group,
        ),
        ...trips('1 name: acquire + release', one),
        ...trips(`${locks} names in turn + release in reverse`, of({ ours: 'seq', curator: 'seq' })),
      ],
      problems: [],
    };
  },
};

function variantSample(latenciesUs: number[], counts: Counts): MultiLockVariantSample {
  return { cycles: latenciesUs.length, p50Us: median(latenciesUs), latenciesUs, counts };
}
