import { byName, type ListedLock, type ListedRun, type RecordData, type StoredRecord } from './lock-backend.js';

/**
 * A job's record: what `withLock` calls with `holdAtLeastMs` (or a `maxHoldMs` of their
 * own) keep about a lock, under the record name `job/<lock name>` (never `run-once/…`):
 * the end of the hold still in force, if any, and the last runs.
 *
 * Every time in it is on the backend's clock (ZooKeeper's), never on an instance's: a
 * writer knows that clock only as the time of its own write (`StoredRecord.writtenAt`), so
 * what it writes about itself is relative to that write (`hold.afterWriteMs`, the newest
 * run's `tookMs`), and what it carries over from an earlier write is made absolute with
 * that write's time (`hold.until`, a run's `startedAt`/`endedAt`).
 */
export function jobRecordName(lockName: string): string {
  return `${JOB_RECORD_PREFIX}${lockName}`;
}

export const JOB_RECORD_PREFIX = 'job/';

/** How many runs a job's record keeps, newest first: a few hundred bytes each, far below `MAX_RECORD_BYTES`. */
export const JOB_HISTORY_LENGTH = 10;

/**
 * How a run ended: `ok` (the function returned), `error` (it threw), `lost` (the lock was
 * lost under it), `max-hold` (it ran past its `maxHoldMs` and the lock was taken back).
 */
export type JobOutcome = ListedRun['outcome'];

const OUTCOMES: readonly JobOutcome[] = ['ok', 'error', 'lost', 'max-hold'];

/** One run of a job, as its record keeps it. */
export interface JobRun {
  /** Unique to the run (absent in records of earlier versions): its writer's retry tells its own first try by it. */
  readonly id?: string;
  /** Who ran it: `<host>:<pid>`. */
  readonly by: string;
  /** The identity of the client that ran it (`identity` option); absent in older records. */
  readonly identity?: string;
  /** When the function started and ended, in ms since the epoch by the backend's clock (within a round trip). */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly outcome: JobOutcome;
}

/** A job's record, read. */
export interface JobState {
  /** Until when (backend clock, ms since the epoch) the lock counts as held by `holdAtLeastMs`; `null`: no hold kept. */
  readonly holdUntil: number | null;
  /** The last runs, newest first. */
  readonly runs: readonly JobRun[];
}

/** A run as its own writer records it: its length, its end being the write's own time. */
export interface FinishedRun {
  readonly id: string;
  readonly by: string;
  readonly identity?: string;
  readonly tookMs: number;
  readonly outcome: JobOutcome;
}

/** The hold and runs `record` keeps; an empty state for none, and fields it cannot read are left out. */
export function readJobState(record: StoredRecord | null): JobState {
  if (!record) return { holdUntil: null, runs: [] };
  const { data, writtenAt } = record;
  const hold = data.hold as { afterWriteMs?: unknown; until?: unknown } | undefined;
  let holdUntil: number | null = null;
  if (isTime(hold?.afterWriteMs)) holdUntil = writtenAt + hold.afterWriteMs;
  else if (isTime(hold?.until)) holdUntil = hold.until;
  const runs = Array.isArray(data.runs) ? data.runs.flatMap((run: unknown) => runOf(run, writtenAt)) : [];
  return { holdUntil, runs };
}

/**
 * The record a run leaves: its own run first, then what `previous` kept (up to
 * `JOB_HISTORY_LENGTH`, times made absolute). The hold is `holdMs` after this write when
 * given; else `previous`'s hold when `keepHold` (a hold this writer did not see end),
 * else none: an ended hold is never carried on.
 */
export function nextJobRecord(
  previous: JobState,
  run: FinishedRun,
  holdMs: number | null,
  keepHold: boolean,
): RecordData {
  const hold =
    holdMs !== null
      ? { afterWriteMs: Math.ceil(holdMs) }
      : keepHold && previous.holdUntil !== null
        ? { until: previous.holdUntil }
        : undefined;
  const { id, by, identity, outcome } = run;
  const own = {
    id,
    by,
    ...(identity !== undefined && { identity }),
    outcome,
    tookMs: Math.max(0, Math.floor(run.tookMs)),
  };
  const runs = [own, ...previous.runs.slice(0, JOB_HISTORY_LENGTH - 1)];
  return hold ? { hold, runs } : { runs };
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function runOf(value: unknown, writtenAt: number): JobRun[] {
  if (value === null || typeof value !== 'object') return [];
  const run = value as {
    id?: unknown;
    by?: unknown;
    identity?: unknown;
    outcome?: unknown;
    tookMs?: unknown;
    startedAt?: unknown;
    endedAt?: unknown;
  };
  if (typeof run.by !== 'string' || !OUTCOMES.includes(run.outcome as JobOutcome)) return [];
  const known = {
    ...(typeof run.id === 'string' && { id: run.id }),
    by: run.by,
    ...(typeof run.identity === 'string' && { identity: run.identity }),
    outcome: run.outcome as JobOutcome,
  };
  // The writer's own run ends at its write; one carried over says when.
  if (isTime(run.tookMs)) return [{ ...known, startedAt: writtenAt - run.tookMs, endedAt: writtenAt }];
  if (isTime(run.startedAt) && isTime(run.endedAt))
    return [{ ...known, startedAt: run.startedAt, endedAt: run.endedAt }];
  return [];
}

/** The lock name of a job's record name, or `null` for a record that is not a job's (`run-once/…`). */
export function jobNameOf(recordName: string): string | null {
  return recordName.startsWith(JOB_RECORD_PREFIX) ? recordName.slice(JOB_RECORD_PREFIX.length) : null;
}

/**
 * `listings` with each job's last run and kept hold, and the jobs no one holds or awaits
 * as idle locks (no holder, no waiter), in name order. `jobs`: each job's lock name and
 * record, already matched to the listing's prefix.
 */
export function withLastRuns(
  listings: readonly ListedLock[],
  jobs: ReadonlyArray<readonly [string, StoredRecord]>,
): ListedLock[] {
  const byLock = new Map(listings.map((listing) => [listing.name, listing]));
  for (const [name, record] of jobs) {
    const listing = byLock.get(name) ?? { kind: 'lock', name, holders: [], waiters: [] };
    if (listing.kind !== 'lock') continue; // a semaphore of that name now: its record tells nothing of it
    const { holdUntil, runs } = readJobState(record);
    const [last] = runs;
    if (!last && holdUntil === null) continue;
    // Its id stays in the record: a listing says who ran it and when.
    const lastRun: ListedRun | undefined = last && {
      by: last.by,
      ...(last.identity !== undefined && { identity: last.identity }),
      startedAt: new Date(last.startedAt),
      endedAt: new Date(last.endedAt),
      outcome: last.outcome,
    };
    byLock.set(name, {
      ...listing,
      ...(lastRun && { lastRun }),
      ...(holdUntil !== null && { keptUntil: new Date(holdUntil) }),
    });
  }
  return [...byLock.values()].sort(byName);
}
