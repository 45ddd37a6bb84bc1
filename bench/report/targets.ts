import type { MetricRow, TargetRow } from '../results.js';
import { UNCONTENDED_FLOOR, UNCONTENDED_WIRE_FLOOR } from '../scenarios/uncontended.scenario.js';
import { median } from '../support/sample-stats.js';
import type { OtherImpl } from '../workers/impl.protocol.js';
import { format, ratioCell } from './tables.js';

/** A target on a metric's side-by-side ratio ours ÷ `other`; no `op`: reported, nothing to meet. */
interface RatioTarget {
  readonly id: string;
  readonly label: string;
  readonly metricId: string;
  readonly other: OtherImpl;
  readonly op?: '>=' | '<=';
  readonly threshold?: number;
  /** The threshold as printed, when `op threshold×` is not how to say it. */
  readonly shown?: string;
}

const REPORTED = 'reported (no target)';
const UNCONTENDED = 'uncontended.cyclesPerSec';
const HANDOFF = 'handoff.p50Us';

function notMeasured(id: string, label: string, threshold: string): TargetRow {
  return { id, label, measured: 'n/a', threshold, pass: null, note: 'not measured in this run' };
}

/** The median per-round ratio, with the lowest and highest round's beside it. */
function ratioRow(metrics: readonly MetricRow[], t: RatioTarget): TargetRow {
  const threshold = t.shown ?? (t.op && t.threshold !== undefined ? `${t.op} ${t.threshold}×` : REPORTED);
  const row = metrics.find((m) => m.id === t.metricId);
  const value = row?.ratio[t.other];
  if (value === undefined || !Number.isFinite(value)) return notMeasured(t.id, t.label, threshold);
  const measured = ratioCell(value, row!.ratioRange[t.other]);
  if (!t.op || t.threshold === undefined)
    return { id: t.id, label: t.label, measured, threshold, pass: null, note: 'no threshold' };
  return {
    id: t.id,
    label: t.label,
    measured,
    threshold,
    pass: t.op === '>=' ? value >= t.threshold : value <= t.threshold,
  };
}

/** ours' median values of the metrics `<prefix>.<N>.<suffix>`, smallest N first. */
function byN(metrics: readonly MetricRow[], prefix: string, suffix: string): Array<{ n: number; value: number }> {
  const pattern = new RegExp(`^${prefix}\\.(\\d+)\\.${suffix}$`);
  return metrics
    .filter((m) => pattern.test(m.id) && Number.isFinite(m.median.ours ?? Number.NaN))
    .map((m) => ({ n: Number(pattern.exec(m.id)![1]), value: m.median.ours! }))
    .sort((a, b) => a.n - b.n);
}

/** A value of ours against a fixed bound (`pass` null with a note when the run cannot judge it). */
function oursRow(
  id: string,
  label: string,
  threshold: string,
  value: number | undefined,
  shown: (value: number) => string,
  pass: (value: number) => boolean | null,
  note?: string,
): TargetRow {
  if (value === undefined || !Number.isFinite(value)) return notMeasured(id, label, threshold);
  const verdict = pass(value);
  return { id, label, measured: shown(value), threshold, pass: verdict, ...(verdict === null && note ? { note } : {}) };
}

/**
 * Beside 1c and E1, ÷ Curator per round: (f) the raw loop sending the read behind the
 * create, as ours does, the floor of round trips on node-zookeeper-client; (g) the same
 * requests on a session spoken by hand, what a leaner transport could reach at best.
 */
function floorRow(metrics: readonly MetricRow[], id: string, scope: string): TargetRow {
  const [metricId, what] = id.endsWith('f')
    ? [UNCONTENDED_FLOOR, "raw loop sending ours' requests together"]
    : [UNCONTENDED_WIRE_FLOOR, 'the same requests spoken by hand, no client library'];
  const label = `${scope}uncontended cycles/s: ${what} ÷ Curator (the floor's reach)`;
  const floor = metrics.find((m) => m.id === metricId)?.rounds.raw;
  const curator = metrics.find((m) => m.id === UNCONTENDED)?.rounds.curator;
  if (!floor?.length || !curator?.length) return notMeasured(id, label, REPORTED);
  const perRound = floor.slice(0, curator.length).map((value, i) => value / curator[i]);
  const measured = ratioCell(median(perRound), [Math.min(...perRound), Math.max(...perRound)]);
  return { id, label, measured, threshold: REPORTED, pass: null, note: 'no threshold' };
}

/**
 * The targets, checked against the measured medians and side-by-side ratios. A target whose
 * inputs this run did not measure is reported as not evaluated (pass null).
 */
export function evaluateTargets(metrics: readonly MetricRow[], server: { forceSync: boolean | null }): TargetRow[] {
  const ratio = (t: RatioTarget): TargetRow => ratioRow(metrics, t);
  const ours = (id: string): number | undefined => metrics.find((m) => m.id === id)?.median.ours;

  // 3 and 8b: the messages per handoff and per grant stay flat in N (a herd grows them with N).
  const perHandoff = byN(metrics, 'drain', 'reqNotifPerHandoff');
  const [h1, hN] = [perHandoff[0], perHandoff[perHandoff.length - 1]];
  const perGrant = byN(metrics, 'leases', 'reqNotifPerGrant');
  const [g1, gN] = [perGrant[0], perGrant[perGrant.length - 1]];
  const drains = byN(metrics, 'drain', 'drainMs');
  const largest = drains[drains.length - 1]?.n;
  const sent = metrics.find((m) => m.id === 'reentrant.requestsSent')?.rounds.ours ?? [];
  const groupOverOne = metrics.find((m) => m.id === 'multiLock.groupOverOne')?.rounds.ours ?? [];

  return [
    ratio({
      id: '1a',
      label: 'uncontended cycles/s: ours ÷ Kazoo',
      metricId: UNCONTENDED,
      other: 'kazoo',
      op: '>=',
      threshold: 1.5,
    }),
    ratio({
      id: '1b',
      label: 'uncontended cycles/s: ours ÷ raw',
      metricId: UNCONTENDED,
      other: 'raw',
      op: '>=',
      threshold: 1,
    }),
    ratio({ id: '2a', label: 'handoff p50: ours ÷ raw', metricId: HANDOFF, other: 'raw', op: '<=', threshold: 1.3 }),
    ratio({
      id: '2b',
      label: 'handoff p50: ours ÷ Kazoo',
      metricId: HANDOFF,
      other: 'kazoo',
      op: '<=',
      threshold: 0.7,
    }),
    perHandoff.length < 2
      ? notMeasured('3', 'requests+notifications per handoff constant in N (ours)', 'flat in N')
      : {
          id: '3',
          label: `requests+notifications per handoff, N=${h1.n} → N=${hN.n} (ours)`,
          measured: perHandoff.map((p) => `${format(p.value)} (N=${p.n})`).join(' → '),
          threshold: `N=${hN.n} <= 1.1 × N=${h1.n}`,
          pass: hN.value <= h1.value * 1.1,
        },
    oursRow(
      '4a',
      `${metrics.find((m) => m.id === 'manyLocks.cyclesPerSec')?.label ?? 'many locks at once'}: cycles/s (ours, forceSync=no)`,
      '>= 5000',
      ours('manyLocks.cyclesPerSec'),
      format,
      (v) => (server.forceSync === false ? v >= 5000 : null),
      'the target is for a forceSync=no server: run with --no-sync',
    ),
    oursRow(
      '4b',
      'client heap per held lock (ours)',
      '<= 2 KB',
      ours('manyLocks.heapPerLockKB'),
      (v) => `${format(v)} KB`,
      (v) => v <= 2,
    ),
    oursRow(
      '5',
      'reentrant nested withLock (ours)',
      '< 5 µs, 0 requests',
      ours('reentrant.usPerCall'),
      (v) => `${format(v)} µs, ${Math.max(...sent)} requests`,
      (v) => v < 5 && sent.every((n) => n === 0),
    ),
    oursRow(
      '7a',
      'multi-lock, p50: acquireAll of 5 free names ÷ acquire of 1 (ours)',
      '<= 1.5×',
      ours('multiLock.groupOverOne'),
      (v) => ratioCell(v, [Math.min(...groupOverOne), Math.max(...groupOverOne)]),
      (v) => v <= 1.5,
    ),
    ratio({
      id: '7b',
      label: 'multi-lock, 5 free names, p50: ours acquireAll ÷ Kazoo 5 Locks in turn',
      metricId: 'multiLock.groupP50Us',
      other: 'kazoo',
      op: '<=',
      threshold: 1 / 3,
      shown: '<= 0.333× (3× faster)',
    }),
    ratio({
      id: '8a',
      label: 'leases, grants/s: ours ÷ Kazoo Semaphore',
      metricId: 'leases.grantsPerSec',
      other: 'kazoo',
      op: '>=',
      threshold: 2,
    }),
    perGrant.length < 2
      ? notMeasured('8b', 'leases: requests+notifications per grant flat in N (ours)', 'within 10%')
      : {
          id: '8b',
          label: `leases: requests+notifications per grant, N=${g1.n} → N=${gN.n} (ours)`,
          measured: `${format(g1.value)} → ${format(gN.value)} (${format(gN.value / g1.value)}×)`,
          threshold: `N=${gN.n} within 10% of N=${g1.n}`,
          pass: gN.value / g1.value <= 1.1 && gN.value / g1.value >= 1 / 1.1,
        },
    ratio({
      id: '1c',
      label: 'uncontended cycles/s: ours ÷ Curator',
      metricId: UNCONTENDED,
      other: 'curator',
      op: '>=',
      threshold: 1.3,
    }),
    floorRow(metrics, '1f', ''),
    floorRow(metrics, '1g', ''),
    ratio({
      id: '2c',
      label: 'handoff p50: ours ÷ Curator',
      metricId: HANDOFF,
      other: 'curator',
      op: '<=',
      threshold: 1,
    }),
    largest === undefined
      ? notMeasured('3b', 'drain of 50 waiters: ours ÷ Curator', '<= 1×')
      : ratio({
          id: '3b',
          label: `drain of ${largest} waiters: ours ÷ Curator`,
          metricId: `drain.${largest}.drainMs`,
          other: 'curator',
          op: '<=',
          threshold: 1,
        }),
    ratio({
      id: '6',
      label: 'read-heavy reader throughput: ours ÷ Curator InterProcessReadWriteLock',
      metricId: 'readHeavy.readerCyclesPerSec',
      other: 'curator',
      op: '>=',
      threshold: 2,
    }),
    ratio({
      id: '7c',
      label: 'multi-lock, 5 free names, p50: ours acquireAll ÷ Curator InterProcessMultiLock',
      metricId: 'multiLock.groupP50Us',
      other: 'curator',
    }),
    ratio({
      id: '8c',
      label: 'leases, grants/s: ours ÷ Curator InterProcessSemaphoreV2',
      metricId: 'leases.grantsPerSec',
      other: 'curator',
    }),
  ];
}

/** The ensemble pass's targets (scenarios 1 and 2 on three servers, every session on one follower). */
export function ensembleTargets(metrics: readonly MetricRow[]): TargetRow[] {
  return [
    ratioRow(metrics, {
      id: 'E1',
      label: 'ensemble: uncontended cycles/s: ours ÷ Curator',
      metricId: UNCONTENDED,
      other: 'curator',
      op: '>=',
      threshold: 1.4,
    }),
    floorRow(metrics, 'E1f', 'ensemble: '),
    floorRow(metrics, 'E1g', 'ensemble: '),
    ratioRow(metrics, {
      id: 'E2',
      label: 'ensemble: handoff p50: ours ÷ Curator',
      metricId: HANDOFF,
      other: 'curator',
      op: '<=',
      threshold: 1,
    }),
  ];
}
