import type { Answer } from './reservation.load.js';

export interface EndpointRun {
  readonly endpoint: string;
  /** Seats the show was opened with: as many as requests sent. */
  readonly seats: number;
  readonly answers: readonly Answer[];
  /** Seats left in the store after the run. */
  readonly remaining: number;
}

export interface EndpointSummary {
  readonly endpoint: string;
  readonly requests: number;
  /** Reservations confirmed to customers (201). */
  readonly confirmed: number;
  /** Seats the store shows as taken. */
  readonly sold: number;
  /** Confirmed reservations the store does not have: overwritten by a concurrent write. */
  readonly lost: number;
  /** Answers other than 201, and requests without an answer. */
  readonly failed: number;
  /** The first answer other than 201, to say what went wrong. */
  readonly failure?: string;
  readonly waits: number[];
  readonly holds: number[];
}

export function summarize(run: EndpointRun): EndpointSummary {
  const confirmed = run.answers.filter((a) => a.status === 201);
  const sold = run.seats - run.remaining;
  const timings = confirmed.flatMap((a) => (a.body?.timing ? [a.body.timing] : []));
  const failure = run.answers.find((a) => a.status !== 201);
  return {
    endpoint: run.endpoint,
    requests: run.answers.length,
    confirmed: confirmed.length,
    sold,
    lost: confirmed.length - sold,
    failed: run.answers.length - confirmed.length,
    failure: failure && (failure.error ?? `${failure.status} ${JSON.stringify(failure.body)}`),
    waits: timings.map((t) => t.waitMs),
    holds: timings.map((t) => t.holdMs),
  };
}

/** Nearest-rank percentile, `-` for no values. */
export function percentile(values: readonly number[], p: number): string {
  if (values.length === 0) return '-';
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)].toFixed(1);
}

export function summaryTable(summaries: readonly EndpointSummary[]): string {
  const rows = summaries.map((s) => ({
    endpoint: s.endpoint,
    requests: String(s.requests),
    'sold/expected': `${s.sold}/${s.confirmed}`,
    'lost updates': String(s.lost),
    'not 201': String(s.failed),
    'wait p50 ms': percentile(s.waits, 50),
    'wait p99 ms': percentile(s.waits, 99),
    'hold p50 ms': percentile(s.holds, 50),
    'hold p99 ms': percentile(s.holds, 99),
  }));
  return formatTable(rows);
}

function formatTable(rows: readonly Record<string, string>[]): string {
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

/** Checks that the fencing tokens, in the order the store recorded them, strictly increase. */
export function fencingCheck(tokens: readonly string[]): { ok: boolean; text: string } {
  const values = tokens.map(BigInt);
  const bad = values.findIndex((v, i) => i > 0 && v <= values[i - 1]);
  if (values.length === 0) return { ok: false, text: 'no fencing token was recorded' };
  if (bad >= 0) return { ok: false, text: `fencing token #${bad + 1} (${values[bad]}) is not above the one before (${values[bad - 1]})` };
  return { ok: true, text: `${values.length} fencing tokens, in the order the store recorded them, strictly increase: ${values[0]} … ${values[values.length - 1]}` };
}
