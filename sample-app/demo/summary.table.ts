import type { Answer } from './concurrent.load.js';

/** Nearest-rank percentile, `-` for no values. */
export function percentile(values: readonly number[], p: number): string {
  if (values.length === 0) return '-';
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)].toFixed(1);
}

/** The waits and holds the 201 answers report (the controls report none). */
export function timingsOf(answers: readonly Answer[]): { waits: number[]; holds: number[] } {
  const timings = answers.flatMap((a) => (a.status === 201 && a.body?.timing ? [a.body.timing] : []));
  return { waits: timings.map((t) => t.waitMs), holds: timings.map((t) => t.holdMs) };
}

/** The four timing columns every table ends with. */
export function timingColumns({
  waits,
  holds,
}: {
  waits: readonly number[];
  holds: readonly number[];
}): Record<string, string> {
  return {
    'wait p50 ms': percentile(waits, 50),
    'wait p99 ms': percentile(waits, 99),
    'hold p50 ms': percentile(holds, 50),
    'hold p99 ms': percentile(holds, 99),
  };
}

/** The first answer other than 201, to say what went wrong. */
export function firstFailure(answers: readonly Answer[]): string | undefined {
  const failure = answers.find((a) => a.status !== 201);
  return failure && (failure.error ?? `${failure.status} ${JSON.stringify(failure.body)}`);
}

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function formatTable(rows: readonly Record<string, string>[]): string {
  const columns = Object.keys(rows[0]);
  const width = (c: string): number => Math.max(c.length, ...rows.map((r) => r[c].length));
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  const pad = (c: string, v: string, i: number): string => (i === 0 ? v.padEnd(width(c)) : v.padStart(width(c)));
  return [
    line(columns.map((c, i) => pad(c, c, i))),
    line(columns.map((c) => '-'.repeat(width(c)))),
    ...rows.map((r) => line(columns.map((c, i) => pad(c, r[c], i)))),
  ].join('\n');
}
