import type { Answer } from './concurrent.load.js';
import { firstFailure, formatTable, timingColumns, timingsOf } from './summary.table.js';

/** Two shows' seats: the first show's and the second's. */
export type SeatPair = readonly [number, number];

export interface TransfersRun {
  readonly endpoint: string;
  /** Answer i is request i's: one seat from the first show to the second if `forward(i)`, else back. */
  readonly answers: readonly Answer[];
  readonly forward: (i: number) => boolean;
  readonly before: SeatPair;
  /** What the store holds after the run. */
  readonly after: SeatPair;
}

export interface TransfersSummary {
  readonly endpoint: string;
  readonly requests: number;
  /** Transfers confirmed (201). */
  readonly moved: number;
  readonly failed: number;
  readonly failure?: string;
  readonly before: SeatPair;
  readonly after: SeatPair;
  /** What the shows should hold: `before`, plus and minus each confirmed transfer. */
  readonly expected: SeatPair;
  /** Seats out of place: created, destroyed or left in the wrong show by overlapping read-modify-writes. */
  readonly astray: number;
  readonly waits: number[];
  readonly holds: number[];
}

export function summarizeTransfers(run: TransfersRun): TransfersSummary {
  let net = 0; // seats moved from the first show to the second, net
  run.answers.forEach((a, i) => a.status === 201 && (net += run.forward(i) ? 1 : -1));
  const expected: SeatPair = [run.before[0] - net, run.before[1] + net];
  const moved = run.answers.filter((a) => a.status === 201).length;
  return {
    endpoint: run.endpoint,
    requests: run.answers.length,
    moved,
    failed: run.answers.length - moved,
    failure: firstFailure(run.answers),
    before: run.before,
    after: run.after,
    expected,
    astray: Math.abs(run.after[0] - expected[0]) + Math.abs(run.after[1] - expected[1]),
    ...timingsOf(run.answers),
  };
}

export const pair = ([a, b]: SeatPair): string => `${a} + ${b}`;

export function transfersTable(summaries: readonly TransfersSummary[]): string {
  return formatTable(
    summaries.map((s) => ({
      endpoint: s.endpoint,
      transfers: String(s.requests),
      moved: String(s.moved),
      'seats before': pair(s.before),
      'seats after': pair(s.after),
      'expected after': pair(s.expected),
      'not 201': String(s.failed),
      ...timingColumns(s),
    })),
  );
}
