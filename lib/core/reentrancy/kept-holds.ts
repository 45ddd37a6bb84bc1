import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { LockAbortedError, LockClientClosedError, LockTimeoutError } from '../errors/errors.js';
import { jobRecordName, nextJobRecord, readJobState, type JobOutcome, type JobState } from '../port/job-record.js';
import type { LockBackend, LockHandle } from '../port/lock-backend.js';
import { lockMessages } from '../errors/messages.js';
import { abortable } from '../util/abortable.js';
import { deadline } from '../util/deadline.js';
import type { ResolvedWithLockOptions } from './call-options.js';

/** A job call's record as read once granted: what the run's end writes over. */
export interface JobStart {
  readonly record: string;
  readonly version: number | null;
  readonly state: JobState;
}

/** How a job call's function ended, for its record. */
export interface JobEnd {
  readonly outcome: JobOutcome;
  /** `performance.now()` when the function started. */
  readonly startedAt: number;
  readonly holdAtLeastMs: number;
}

/** A record write that lost to another writer is tried again over what that one wrote, this many times at most. */
const WRITE_TRIES = 3;

/**
 * `holdAtLeastMs` kept in the backend (ZooKeeper), not in the holder's process: when a job
 * call's function ends with hold time left, its record (`job/<name>`, see
 * core/port/job-record) gets the hold's end and the lock goes at once, leaving a kept hold
 * that every acquirer honours (see core/port/kept-hold; the record is what job calls read
 * when that marker is gone with its holder's session). So a holder
 * killed, closed or cut off during the hold leaves the hold behind, and the lock counts as
 * held until `holdAtLeastMs` after the function started, on the backend's clock:
 *
 * - The writer knows that clock only through its write's time W (stamped between request
 *   and answer), so it stores `afterWriteMs = holdAtLeastMs - elapsed`, `elapsed` measured
 *   on its monotonic clock from the function's start to the moment it sent the write. W is
 *   no earlier than the backend's time at sending, so the end, W + afterWriteMs, is no
 *   earlier than the backend's time at the start plus `holdAtLeastMs`.
 * - A reader needs a "now" that never runs ahead of the backend's: `serverTime()` (again a
 *   write's time, so no later than the backend's now at the answer) plus the time since the
 *   answer. A hold ending after that counts as held; a `wait` call waits it out, so its own
 *   function starts after the hold's end on the backend's clock.
 *
 * Only job calls read and write records (`withLock` with `holdAtLeastMs` > 0 or a
 * `maxHoldMs` of its own): other calls cost what they cost without it.
 */
export class KeptHolds {
  private readonly by = `${hostname()}:${process.pid}`;
  /** The holds this instance wrote, by lock name: when each ends (`performance.now()` time, at the latest). */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly backend: LockBackend,
    /** Aborts when shutdown begins: a wait for a hold's end fails then, as any wait does. */
    private readonly closing: AbortSignal,
  ) {}

  /**
   * Once `handle` is granted: the job's record, after waiting out a hold still in force.
   * A hold that ends past the call's deadline (`calledAt + timeoutMs`; at once for
   * `timeoutMs: 0`, as `ifLocked: 'skip'` and `'throw'` default to) fails at once with
   * `LockTimeoutError`, as a lock held past it does; so does a wait cut short by the
   * call's signal (`LockAbortedError`), shutdown (`LockClientClosedError`) or the lock's
   * loss. The caller still holds `handle` then: releasing it is the caller's.
   */
  async begin(handle: LockHandle, call: ResolvedWithLockOptions, calledAt: number): Promise<JobStart> {
    const record = jobRecordName(handle.name);
    const read = await this.backend.readRecord(record);
    const start = { record, version: read?.version ?? null, state: readJobState(read) };
    const { holdUntil } = start.state;
    if (holdUntil === null) return start;
    const serverNow = await this.backend.serverTime();
    const answeredAt = performance.now();
    // On this process's monotonic clock, the hold ends no later than this.
    const endsAt = answeredAt + (holdUntil - serverNow);
    if (endsAt <= answeredAt) return start;
    if (endsAt > calledAt + call.timeoutMs) {
      const message = lockMessages.keptHold(handle.name, call.mode, call.timeoutMs, endsAt - answeredAt);
      throw new LockTimeoutError(handle.name, call.mode, call.timeoutMs, message);
    }
    await this.pause(handle, call, endsAt - performance.now());
    return start;
  }

  /**
   * Writes the run's end into the record: the hold left (none when the function took longer,
   * or when the lock was lost: then `holdAtLeastMs` guards nothing of ours) and the run.
   * Written over the version read at the grant; if another writer came between (a holder
   * that lost the lock writing its run late), read again and write over that, keeping the
   * hold it wrote unless ours replaces it. Resolves whether the hold left, if any, is now in
   * the record; on `false` (the write failed, or kept losing) the caller keeps the lock.
   */
  async finish(handle: LockHandle, start: JobStart, end: JobEnd): Promise<boolean> {
    const id = randomUUID();
    let { version, state } = start;
    let keepHold = false; // the hold read at the grant ended before the function started
    let holdMs: number | null = null;
    try {
      for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
        // Measured right before sending: the write's time is no earlier than the backend's now at this moment.
        const sentAt = performance.now();
        const tookMs = sentAt - end.startedAt;
        const left = end.holdAtLeastMs - tookMs;
        holdMs = left > 0 && handle.isHeld() ? left : null;
        const finished = { id, by: this.by, identity: this.backend.identity, tookMs, outcome: end.outcome };
        const data = nextJobRecord(state, finished, holdMs, keepHold);
        if (await this.backend.writeRecord(start.record, data, { expectedVersion: version }))
          return this.wrote(handle.name, sentAt, holdMs);
        const read = await this.backend.readRecord(start.record);
        ({ version, state } = { version: read?.version ?? null, state: readJobState(read) });
        // Our own try, its answer lost with the connection, committed before the retry: written.
        if (state.runs.some((run) => run.id === id)) return this.wrote(handle.name, sentAt, holdMs);
        keepHold = true;
      }
    } catch {
      // unknown whether it was written: the caller keeps the lock itself if there was hold time left
    }
    return holdMs === null;
  }

  /** Notes the hold just written for `name`, if any (see `keeps`). */
  private wrote(name: string, sentAt: number, holdMs: number | null): true {
    if (holdMs !== null) this.written.set(name, sentAt + holdMs);
    return true;
  }

  /** Whether a hold this instance wrote still keeps `name` (for the skip line: not another holder). */
  keeps(name: string): boolean {
    const until = this.written.get(name);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.written.delete(name);
    return false;
  }

  /** Waits `ms`, or fails as a lock wait fails when the call's signal, shutdown or the lock's loss cuts it short. */
  private async pause(handle: LockHandle, call: ResolvedWithLockOptions, ms: number): Promise<void> {
    const timer = deadline(ms, () => undefined);
    const elapsed = new Promise<void>((resolve) => timer.signal.addEventListener('abort', () => resolve()));
    const signals = [handle.signal, this.closing, ...(call.signal ? [call.signal] : [])];
    try {
      await abortable(elapsed, signals);
    } catch (reason) {
      if (call.signal?.aborted) throw new LockAbortedError(handle.name, call.signal.reason);
      if (this.closing.aborted) throw new LockClientClosedError();
      throw reason;
    } finally {
      timer.clear();
    }
  }
}
