import type { MetricRow, TargetRow } from '../bench.results.js';
import { ratioCell } from './table.report.js';

/** A target not evaluated because this run did not measure its inputs. */
export function notMeasured(id: string, label: string, threshold: string): TargetRow {
  return { id, label, measured: 'n/a', threshold, pass: null, note: 'not measured in this run' };
}

/**
 * A target on a metric's side-by-side ratio, ours ÷ `other` (the median per-round ratio,
 * with the lowest and highest round's). `shown`: the threshold as printed.
 */
export function ratioTargetRow(
  metrics: readonly MetricRow[],
  target: { id: string; label: string; metricId: string; other: 'raw' | 'kazoo'; op: '>=' | '<='; threshold: number; shown?: string },
): TargetRow {
  const { id, label, op, threshold, shown = `${op} ${threshold}×` } = target;
  const row = metrics.find((m) => m.id === target.metricId);
  const value = row?.ratio[target.other];
  if (value === undefined || !Number.isFinite(value)) return notMeasured(id, label, shown);
  return { id, label, measured: ratioCell(value, row!.ratioRange[target.other]), threshold: shown, pass: op === '>=' ? value >= threshold : value <= threshold };
}
