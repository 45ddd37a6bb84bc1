import type { MetricRow, TargetRow } from '../bench.results.js';
import type { OtherImpl } from '../workers/impl.protocol.js';
import { ratioCell } from './table.report.js';

/** A target not evaluated because this run did not measure its inputs. */
export function notMeasured(id: string, label: string, threshold: string): TargetRow {
  return { id, label, measured: 'n/a', threshold, pass: null, note: 'not measured in this run' };
}

export interface RatioTarget {
  readonly id: string;
  readonly label: string;
  readonly metricId: string;
  readonly other: OtherImpl;
  /** No `op`: the ratio is reported, with no threshold to meet. */
  readonly op?: '>=' | '<=';
  readonly threshold?: number;
  /** The threshold as printed. */
  readonly shown?: string;
  /** The round-trip rows (scenario, part of `per`) of both sides, to explain a miss. */
  readonly trips?: { readonly scenario: number; readonly per: string };
}

/**
 * A target on a metric's side-by-side ratio, ours ÷ `other` (the median per-round ratio,
 * with the lowest and highest round's).
 */
export function ratioTargetRow(metrics: readonly MetricRow[], target: RatioTarget): TargetRow {
  const { id, label, op, threshold, metricId, other, trips } = target;
  const shown = target.shown ?? (op && threshold !== undefined ? `${op} ${threshold}×` : 'reported (no target)');
  const row = metrics.find((m) => m.id === metricId);
  const value = row?.ratio[other];
  if (value === undefined || !Number.isFinite(value)) return notMeasured(id, label, shown);
  const basis = trips && { a: { metricId, impl: 'ours' as const, ...trips }, b: { metricId, impl: other, ...trips } };
  const measured = ratioCell(value, row!.ratioRange[other]);
  if (!op || threshold === undefined)
    return { id, label, measured, threshold: shown, pass: null, note: 'no threshold', ...(basis && { basis }) };
  return {
    id,
    label,
    measured,
    threshold: shown,
    pass: op === '>=' ? value >= threshold : value <= threshold,
    ...(basis && { basis }),
  };
}
