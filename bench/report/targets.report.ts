import type { MetricRow, TargetRow } from '../bench.results.js';
import type { OtherImpl } from '../workers/impl.protocol.js';
import { curatorTargets } from './curator-targets.report.js';
import { format } from './number.format.js';
import { ratioTargetRow } from './ratio-target.row.js';
import { recipeTargets } from './recipe-targets.report.js';

/**
 * The targets, checked against the measured medians and side-by-side ratios (the
 * median per-round ratio; the lowest and highest round's are shown beside it).
 * A target whose inputs this run did not measure is reported as not evaluated (pass null).
 */
export function evaluateTargets(metrics: readonly MetricRow[], server: { forceSync: boolean | null }): TargetRow[] {
  const metric = (id: string): MetricRow | undefined => metrics.find((m) => m.id === id);
  const rows: TargetRow[] = [];
  const ratioTarget = (
    id: string,
    label: string,
    metricId: string,
    other: OtherImpl,
    op: '>=' | '<=',
    threshold: number,
    trips: { scenario: number; per: string },
  ): void => {
    rows.push(ratioTargetRow(metrics, { id, label, metricId, other, op, threshold, trips }));
  };
  const cycle = { scenario: 1, per: 'uncontended cycle' };
  const handoff = { scenario: 2, per: 'handoff' };

  ratioTarget('1a', 'uncontended cycles/s: ours ÷ Kazoo', 'uncontended.cyclesPerSec', 'kazoo', '>=', 1.5, cycle);
  ratioTarget('1b', 'uncontended cycles/s: ours ÷ raw', 'uncontended.cyclesPerSec', 'raw', '>=', 1.0, cycle);
  ratioTarget('2a', 'handoff p50: ours ÷ raw', 'handoff.p50Us', 'raw', '<=', 1.3, handoff);
  ratioTarget('2b', 'handoff p50: ours ÷ Kazoo', 'handoff.p50Us', 'kazoo', '<=', 0.7, handoff);

  // 3: requests + notifications per handoff flat in N (a herd grows them with N).
  const perHandoff = metrics
    .filter((m) => /^drain\.\d+\.reqNotifPerHandoff$/.test(m.id) && m.median.ours !== undefined)
    .map((m) => ({ n: Number(m.id.split('.')[1]), value: m.median.ours! }))
    .sort((a, b) => a.n - b.n);
  if (perHandoff.length >= 2) {
    const first = perHandoff[0];
    const last = perHandoff[perHandoff.length - 1];
    rows.push({
      id: '3',
      label: `requests+notifications per handoff, N=${first.n} → N=${last.n} (ours)`,
      measured: perHandoff.map((p) => `${format(p.value)} (N=${p.n})`).join(' → '),
      threshold: `N=${last.n} <= 1.1 × N=${first.n}`,
      pass: last.value <= first.value * 1.1,
    });
  } else {
    rows.push({
      id: '3',
      label: 'requests+notifications per handoff constant in N (ours)',
      measured: 'n/a',
      threshold: 'flat in N',
      pass: null,
      note: 'not measured in this run',
    });
  }

  const many = metric('manyLocks.cyclesPerSec')?.median.ours;
  const manyLabel = metric('manyLocks.cyclesPerSec')?.label ?? 'many locks at once';
  if (many === undefined) {
    rows.push({
      id: '4a',
      label: 'many locks at once: cycles/s (ours, forceSync=no)',
      measured: 'n/a',
      threshold: '>= 5000',
      pass: null,
      note: 'not measured in this run',
    });
  } else {
    rows.push({
      id: '4a',
      label: `${manyLabel}: cycles/s (ours, forceSync=no)`,
      measured: format(many),
      threshold: '>= 5000',
      pass: server.forceSync === false ? many >= 5000 : null,
      ...(server.forceSync === false ? {} : { note: 'the target is for a forceSync=no server: run with --no-sync' }),
    });
  }
  const heap = metric('manyLocks.heapPerLockKB')?.median.ours;
  rows.push(
    heap === undefined
      ? {
          id: '4b',
          label: 'client heap per held lock (ours)',
          measured: 'n/a',
          threshold: '<= 2 KB',
          pass: null,
          note: 'not measured in this run',
        }
      : {
          id: '4b',
          label: 'client heap per held lock (ours)',
          measured: `${format(heap)} KB`,
          threshold: '<= 2 KB',
          pass: heap <= 2,
        },
  );

  const reentrant = metric('reentrant.usPerCall')?.median.ours;
  const sentRounds = metric('reentrant.requestsSent')?.rounds.ours ?? [];
  rows.push(
    reentrant === undefined
      ? {
          id: '5',
          label: 'reentrant nested withLock (ours)',
          measured: 'n/a',
          threshold: '< 5 µs, 0 requests',
          pass: null,
          note: 'not measured in this run',
        }
      : {
          id: '5',
          label: 'reentrant nested withLock (ours)',
          measured: `${format(reentrant)} µs, ${Math.max(...sentRounds)} requests`,
          threshold: '< 5 µs, 0 requests',
          pass: reentrant < 5 && sentRounds.every((n) => n === 0),
        },
  );
  rows.push(...recipeTargets(metrics), ...curatorTargets(metrics));
  return rows;
}
