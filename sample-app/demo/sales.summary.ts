import type { Answer } from './concurrent.load.js';
import { firstFailure, formatTable, timingColumns, timingsOf } from './summary.table.js';

export interface SalesRun {
  readonly endpoint: string;
  /** Seats the show was opened with: as many as requests sent. */
  readonly seats: number;
  readonly answers: readonly Answer[];
  /** Seats left in the store after the run. */
  readonly remaining: number;
}

export interface SalesSummary {
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

export function summarizeSales(run: SalesRun): SalesSummary {
  const confirmed = run.answers.filter((a) => a.status === 201).length;
  const sold = run.seats - run.remaining;
  return {
    endpoint: run.endpoint,
    requests: run.answers.length,
    confirmed,
    sold,
    lost: confirmed - sold,
    failed: run.answers.length - confirmed,
    failure: firstFailure(run.answers),
    ...timingsOf(run.answers),
  };
}

export function salesTable(summaries: readonly SalesSummary[]): string {
  return formatTable(
    summaries.map((s) => ({
      endpoint: s.endpoint,
      requests: String(s.requests),
      'sold/expected': `${s.sold}/${s.confirmed}`,
      'lost updates': String(s.lost),
      'not 201': String(s.failed),
      ...timingColumns(s),
    })),
  );
}

/** Checks that the fencing tokens, in the order the store recorded them, strictly increase. */
export function fencingCheck(tokens: readonly string[]): { ok: boolean; text: string } {
  const values = tokens.map(BigInt);
  const bad = values.findIndex((v, i) => i > 0 && v <= values[i - 1]);
  if (values.length === 0) return { ok: false, text: 'no fencing token was recorded' };
  if (bad >= 0)
    return {
      ok: false,
      text: `fencing token #${bad + 1} (${values[bad]}) is not above the one before (${values[bad - 1]})`,
    };
  return {
    ok: true,
    text: `${values.length} fencing tokens, in the order the store recorded them, strictly increase: ${values[0]} … ${values[values.length - 1]}`,
  };
}
