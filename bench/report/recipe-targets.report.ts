import type { MetricRow, TargetRow } from '../bench.results.js';
import { format } from './number.format.js';
import { notMeasured, ratioTargetRow } from './ratio-target.row.js';
import { ratioCell } from './table.report.js';

/** The targets for the multi-lock (7) and the lease semaphore (8). */
export function recipeTargets(metrics: readonly MetricRow[]): TargetRow[] {
  return [
    groupOverOne(metrics),
    ratioTargetRow(metrics, {
      id: '7b',
      label: 'multi-lock, 5 free names, p50: ours acquireAll ÷ Kazoo 5 Locks in turn',
      metricId: 'multiLock.groupP50Us',
      other: 'kazoo',
      op: '<=',
      threshold: 1 / 3,
      shown: '<= 0.333× (3× faster)',
      trips: { scenario: 7, per: 'names as a group' },
    }),
    ratioTargetRow(metrics, {
      id: '8a',
      label: 'leases, grants/s: ours ÷ Kazoo Semaphore',
      metricId: 'leases.grantsPerSec',
      other: 'kazoo',
      op: '>=',
      threshold: 2,
      trips: { scenario: 8, per: 'grant (C=' },
    }),
    perGrantFlat(metrics),
  ];
}

/** 7a compares ours with ours: the median of ours' per-round ratios of two variants run in turns (raw's floor is in the table). */
function groupOverOne(metrics: readonly MetricRow[]): TargetRow {
  const row = metrics.find((m) => m.id === 'multiLock.groupOverOne');
  const label = 'multi-lock, p50: acquireAll of 5 free names ÷ acquire of 1 (ours)';
  const value = row?.median.ours;
  const rounds = row?.rounds.ours ?? [];
  if (value === undefined || !Number.isFinite(value)) return notMeasured('7a', label, '<= 1.5×');
  // Ours against ours: the group's round trips against one name's.
  const basis = {
    a: { metricId: 'multiLock.groupP50Us', impl: 'ours' as const, scenario: 7, per: 'names as a group' },
    b: { metricId: 'multiLock.oneP50Us', impl: 'ours' as const, scenario: 7, per: '1 name' },
  };
  return {
    id: '7a',
    label,
    measured: ratioCell(value, [Math.min(...rounds), Math.max(...rounds)]),
    threshold: '<= 1.5×',
    pass: value <= 1.5,
    basis,
  };
}

/** 8b: requests + notifications per grant, smallest N against largest, within 10% either way (a herd grows them with N). */
function perGrantFlat(metrics: readonly MetricRow[]): TargetRow {
  const sizes = metrics
    .filter((m) => /^leases\.\d+\.reqNotifPerGrant$/.test(m.id) && Number.isFinite(m.median.ours ?? Number.NaN))
    .map((m) => ({ n: Number(m.id.split('.')[1]), value: m.median.ours! }))
    .sort((a, b) => a.n - b.n);
  if (sizes.length < 2)
    return notMeasured('8b', 'leases: requests+notifications per grant flat in N (ours)', 'within 10%');
  const [first, last] = [sizes[0], sizes[sizes.length - 1]];
  const ratio = last.value / first.value;
  return {
    id: '8b',
    label: `leases: requests+notifications per grant, N=${first.n} → N=${last.n} (ours)`,
    measured: `${format(first.value)} → ${format(last.value)} (${format(ratio)}×)`,
    threshold: `N=${last.n} within 10% of N=${first.n}`,
    pass: ratio <= 1.1 && ratio >= 1 / 1.1,
  };
}
