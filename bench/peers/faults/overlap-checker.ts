/**
 * The checker of the fault trials: from what the two holders of one trial reported (A, who
 * held the lock when the fault struck, and B, who asked for it after A's grant), did their
 * holds overlap and for how long, was A told before B was granted, and how many of A's
 * writes came after B's grant. A pure function of the events, so its rules are unit-tested
 * on made-up events (test/bench/overlap-checker.spec.ts).
 *
 * A hold is [granted, end), `end` the first of A's `told-lost`, `stopped`, `releasing`,
 * `hold-done` after its grant: the moment the holder stopped counting on the lock. Times
 * are the workers' `process.hrtime.bigint()` (one machine-wide monotonic clock).
 *
 * A holder stopped by SIGSTOP can neither be told nor act: if it woke to the news (after
 * the pause it reported `told-lost` or `stopped`, and no write), it held nothing after it
 * was stopped, and its hold ends there; if it wrote after waking, it went on holding
 * through the pause (`TrialOptions.aPaused`).
 */
import { median } from '../../support/sample-stats.js';
import type { HoldEvent } from '../peer-worker.protocol.js';

/** A's writes after B's grant, by row and outcome. */
export interface StaleWrites {
  /** The row guarded by the lock's fencing token (PgFence); none for a lock without a token. */
  readonly fenced: { readonly landed: number; readonly refused: number };
  /** The row written with no check. */
  readonly unfenced: { readonly landed: number };
}

/** What one trial showed. */
export interface TrialCheck {
  /** A was granted the lock (without it the trial shows nothing). */
  readonly aGranted: boolean;
  /** B was granted the lock at some point in the trial. */
  readonly bGranted: boolean;
  /**
   * B's call ended without a grant, rejected (it gave up waiting, or its library failed it:
   * a dropped connection, say): no overlap then says nothing of the lock's safety.
   */
  readonly bFailed: boolean;
  /** A's and B's holds intersect. */
  readonly overlapped: boolean;
  /** The length of that intersection, ms (0 when they do not overlap). */
  readonly overlapMs: number;
  /**
   * B was granted while A still had the lock (after A's grant, before A's work ended,
   * `releasing` or `hold-done`), or after A was told during its work that it had lost it:
   * was A told (`told-lost`, or `stopped` by its own check) at or before that grant? null
   * when the lock went to B in the normal way (A, never told, had released it) or B was
   * never granted.
   */
  readonly toldFirst: boolean | null;
  /** A's writes whose `at` (COMMIT returned) is after B's grant: zero when B was never granted. */
  readonly staleWrites: StaleWrites;
}

/** What the trial did to A, besides what its events say. */
export interface TrialOptions {
  /** A was stopped (SIGSTOP) from `from` to `to` (SIGCONT), hrtime ns strings as the events'. */
  readonly aPaused?: { readonly from: string; readonly to: string };
}

/** One holder's hold: its grant and end in ns, end undefined while it had not ended when the events stop. */
interface Hold {
  readonly granted: bigint;
  readonly end: bigint | undefined;
}

const ENDS: ReadonlySet<HoldEvent['type']> = new Set(['told-lost', 'stopped', 'releasing', 'hold-done']);

function holdOf(events: readonly HoldEvent[], paused?: TrialOptions['aPaused']): Hold | undefined {
  const grant = events.find((event) => event.type === 'granted');
  if (!grant) return undefined;
  const granted = BigInt(grant.at);
  const ends = events.filter((event) => ENDS.has(event.type) && BigInt(event.at) >= granted);
  const end = earliest(ends);
  if (!paused) return { granted, end };
  const [from, to] = [BigInt(paused.from), BigInt(paused.to)];
  const stillHeld = from > granted && (end === undefined || end > from);
  const after = events.filter((event) => BigInt(event.at) >= to);
  const wokeToNews =
    after.some((event) => event.type === 'told-lost' || event.type === 'stopped') &&
    !after.some((event) => event.type === 'write');
  return { granted, end: stillHeld && wokeToNews ? from : end };
}

/** The earliest `at` of `events`, undefined when there are none. */
function earliest(events: readonly HoldEvent[]): bigint | undefined {
  let first: bigint | undefined;
  for (const event of events) {
    const at = BigInt(event.at);
    if (first === undefined || at < first) first = at;
  }
  return first;
}

/** The latest `at` of a holder's events: where its hold is taken to end when no end event came. */
function lastSeen(events: readonly HoldEvent[]): bigint {
  let last = 0n;
  for (const event of events) if (BigInt(event.at) > last) last = BigInt(event.at);
  return last;
}

/**
 * Checks one trial from A's and B's events (each holder's own, in any order). A hold whose
 * end the events do not show (its worker died) lasts to that holder's last event: a
 * process that is gone holds nothing it can use.
 */
export function checkTrial(a: readonly HoldEvent[], b: readonly HoldEvent[], options: TrialOptions = {}): TrialCheck {
  const holdA = holdOf(a, options.aPaused);
  const holdB = holdOf(b);
  const stale = staleWrites(a, holdB?.granted);
  const bFailed = !holdB && b.some((event) => event.type === 'hold-done' && event.error !== undefined);
  if (!holdA || !holdB)
    return {
      aGranted: !!holdA,
      bGranted: !!holdB,
      bFailed,
      overlapped: false,
      overlapMs: 0,
      toldFirst: null,
      staleWrites: stale,
    };
  const from = holdA.granted > holdB.granted ? holdA.granted : holdB.granted;
  const endA = holdA.end ?? lastSeen(a);
  const endB = holdB.end ?? lastSeen(b);
  const to = endA < endB ? endA : endB;
  const overlapNs = to > from ? to - from : 0n;
  return {
    aGranted: true,
    bGranted: true,
    bFailed,
    overlapped: overlapNs > 0n,
    overlapMs: Number(overlapNs) / 1e6,
    toldFirst: toldFirst(a, holdA.granted, holdB.granted),
    staleWrites: stale,
  };
}

/** See `TrialCheck.toldFirst`. */
function toldFirst(a: readonly HoldEvent[], aGranted: bigint, bGranted: bigint): boolean | null {
  const after = (event: HoldEvent): boolean => BigInt(event.at) >= aGranted;
  const workEnded = earliest(a.filter((e) => (e.type === 'releasing' || e.type === 'hold-done') && after(e)));
  const told = earliest(a.filter((e) => (e.type === 'told-lost' || e.type === 'stopped') && after(e)));
  const toldInWork = told !== undefined && (workEnded === undefined || told <= workEnded);
  if (bGranted < aGranted || (!toldInWork && workEnded !== undefined && bGranted >= workEnded)) return null;
  return told !== undefined && told <= bGranted;
}

function staleWrites(a: readonly HoldEvent[], bGranted: bigint | undefined): StaleWrites {
  const counts = { fenced: { landed: 0, refused: 0 }, unfenced: { landed: 0 } };
  if (bGranted === undefined) return counts;
  for (const event of a) {
    if (event.type !== 'write' || BigInt(event.at) <= bGranted) continue;
    if (event.row === 'unfenced') {
      if (event.outcome === 'landed') counts.unfenced.landed++;
    } else counts.fenced[event.outcome]++;
  }
  return counts;
}

/** The trials of one scenario, variant and lock, summed for the page. */
export interface TrialSummary {
  readonly trials: number;
  /** Trials in which A was granted the lock. */
  readonly aGranted: number;
  /** Trials in which B's call failed without a grant (see `TrialCheck.bFailed`). */
  readonly bFailed: number;
  readonly overlapped: number;
  /** Median and longest overlap of the trials that overlapped, ms; null when none did. */
  readonly overlapMedianMs: number | null;
  readonly overlapMaxMs: number | null;
  /** Trials in which A was told at or before B's grant… */
  readonly toldFirst: number;
  /** …of the trials in which the lock was taken from A: `toldFirst` not null. */
  readonly takenOver: number;
  /** A's writes after B's grant, summed over the trials. */
  readonly staleWrites: StaleWrites;
  /** Trials with at least one such write that landed, per row. */
  readonly trialsWithStaleLanded: { readonly fenced: number; readonly unfenced: number };
}

/** Sums trials' checks (see `TrialSummary`). */
export function summarise(checks: readonly TrialCheck[]): TrialSummary {
  const overlaps = checks.filter((check) => check.overlapped).map((check) => check.overlapMs);
  const sum = (pick: (check: TrialCheck) => number): number => checks.reduce((total, c) => total + pick(c), 0);
  const count = (test: (check: TrialCheck) => boolean): number => checks.filter(test).length;
  return {
    trials: checks.length,
    aGranted: count((c) => c.aGranted),
    bFailed: count((c) => c.bFailed),
    overlapped: overlaps.length,
    overlapMedianMs: overlaps.length > 0 ? median(overlaps) : null,
    overlapMaxMs: overlaps.length > 0 ? Math.max(...overlaps) : null,
    toldFirst: count((c) => c.toldFirst === true),
    takenOver: count((c) => c.toldFirst !== null),
    staleWrites: {
      fenced: { landed: sum((c) => c.staleWrites.fenced.landed), refused: sum((c) => c.staleWrites.fenced.refused) },
      unfenced: { landed: sum((c) => c.staleWrites.unfenced.landed) },
    },
    trialsWithStaleLanded: {
      fenced: count((c) => c.staleWrites.fenced.landed > 0),
      unfenced: count((c) => c.staleWrites.unfenced.landed > 0),
    },
  };
}
