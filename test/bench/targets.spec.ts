import { metricRow } from '../../bench/scenarios/scenario';
import type { BenchResults, TargetRow } from '../../bench/results';
import { rejudged } from '../../bench/report/targets';

/** Saved results as a run wrote them: one uncontended metric, and targets as judged on the day of the run. */
function saved(targets: TargetRow[], extra: Partial<BenchResults> = {}): BenchResults {
  const metrics = [
    metricRow({
      id: 'uncontended.cyclesPerSec',
      scenario: 1,
      label: 'uncontended acquire+release',
      unit: 'cycles/s',
      better: 'higher',
      rounds: { ours: [1400, 1300, 1500], curator: [1000, 1000, 1000] },
    }),
  ];
  return {
    schema: 1,
    meta: { server: { forceSync: true } } as BenchResults['meta'],
    counts: {} as BenchResults['counts'],
    samples: {},
    metrics,
    roundTrips: [],
    targets,
    problems: [],
    ...extra,
  };
}

const stale = (id: string, threshold: string): TargetRow => ({ id, label: id, measured: '?', threshold, pass: false });
const find = (rows: readonly TargetRow[], id: string): TargetRow | undefined => rows.find((t) => t.id === id);

describe('bench --render: targets judged again by today’s rules', () => {
  it('recomputes the loopback targets from the saved metrics', () => {
    const again = rejudged(saved([stale('1c', '>= 9×')]));
    expect(find(again.targets, '1c')).toMatchObject({
      threshold: '>= 1.3×',
      pass: true,
      measured: '1.40× [1.30–1.50]',
    });
  });

  it('judges a nested ensemble pass by the ensemble’s rules: E1 is reported, no longer a target', () => {
    const ensemble = saved([stale('E1', '>= 1.4×')]);
    const again = rejudged(saved([], { ensemble }));
    expect(find(again.ensemble!.targets, 'E1')).toMatchObject({ threshold: 'reported (no target)', pass: null });
    expect(find(again.targets, 'E1')).toBeUndefined();
  });

  it('judges a latency pass by the latency rules at its own delay', () => {
    const meta = { server: { forceSync: true }, network: { oneWayMs: 1 } } as BenchResults['meta'];
    const again = rejudged(saved([], { meta }));
    expect(find(again.targets, 'L1')).toMatchObject({ threshold: '>= 2×', pass: false });
  });
});
