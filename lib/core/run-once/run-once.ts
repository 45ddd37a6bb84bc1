import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { InvalidOptionError, LockLostError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import type { LockBackend, LockHandle, ReadOptions } from '../port/lock-backend.js';
import { checkTimeoutMs } from '../port/options.js';

/** Options of `runOnce`. */
export interface RunOnceOptions {
  /**
   * How long to wait for the lock while another instance runs the step, in milliseconds.
   * Default `Infinity`: start-up steps (migrations) can take long, and an instance that
   * gave up waiting would start without them. `LockTimeoutError` past it.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait (`LockAbortedError`); a run under way is not stopped by it. */
  readonly signal?: AbortSignal;
  /** Who ran it, as the record says. Default `<host>:<pid>`. */
  readonly by?: string;
}

/** What `runOnce` keeps once the step completed (ZooKeeper: JSON in `<rootPath>-records/run-once%2F<key>`). */
export interface RunOnceRecord {
  readonly by: string;
  /** ISO 8601, by the runner's clock. */
  readonly startedAt: string;
  readonly endedAt: string;
  readonly durationMs: number;
  readonly outcome: 'done';
  /** Unique to the run: a write repeated after a lost connection tells its own first try by it. */
  readonly runId: string;
}

/** The record name of `key`'s step: kept apart from any record of the lock `key` itself. */
export function runOnceRecordName(key: string): string {
  return `run-once/${key}`;
}

/**
 * Runs `fn` on exactly one of the instances that call it with `key`, once for good:
 * resolves `true` where it ran, `false` where another instance ran it (or had run it
 * before: the completion is recorded, and read first). Every caller resolves only once the
 * run completed: the others wait for the lock `key`, and read the record when they get it.
 *
 * When `fn` throws (or rejects), the caller that ran it rejects with that error and no
 * completion is recorded: the next waiter runs `fn` itself. So a failed step is retried by
 * the next instance; write steps that may run again after a failure (migrations in a
 * transaction are). When the runner's lock is lost mid-run (its session expired, the
 * process died, its node was deleted by `release --force`), a waiter runs `fn` too; the
 * runner, if alive, rejects with `LockLostError` after `fn` returns and records nothing:
 * the completion is written only while the lock is held. `fn` gets the lock's signal, to
 * stop early then. A runner that finds a completion recorded by another when `fn` returns
 * (written by hand, or by an older version that did not check its lock) resolves `false`.
 */
export async function runOnce(
  backend: LockBackend,
  key: string,
  fn: (signal: AbortSignal) => unknown,
  options?: RunOnceOptions,
): Promise<boolean> {
  const { timeoutMs, signal, by } = resolveRunOnceOptions(fn, options);
  const record = runOnceRecordName(key);
  const read = { timeoutMs };
  if (await backend.readRecord(record, read)) return false;
  const lock = await backend.acquire(key, { timeoutMs, signal });
  try {
    // The runner may have finished while this caller waited for the lock: read again under it.
    if (await backend.readRecord(record, read)) return false;
    const started = Date.now();
    await fn(lock.signal);
    lock.assertHeld(); // lost mid-run: another may be running it now; never record a run we cannot vouch for
    const ended = Date.now();
    const done: RunOnceRecord = {
      by,
      startedAt: new Date(started).toISOString(),
      endedAt: new Date(ended).toISOString(),
      durationMs: ended - started,
      outcome: 'done',
      runId: randomUUID(),
    };
    return await recordCompletion(backend, record, done, lock, read);
  } finally {
    await lock.release();
  }
}

/**
 * Writes `done` only where no completion is recorded and only while `lock` is held (on
 * ZooKeeper one transaction with a check of the lock's node): a runner whose lock went
 * unknown to it (its node deleted by `release --force`) cannot record a run over another's.
 * `false` where another's completion is there. A write whose first try committed but whose
 * answer was lost meets its own record on the retry (or, its session ended meanwhile, its
 * lock gone): the record's `runId` tells that the completion is ours.
 */
async function recordCompletion(
  backend: LockBackend,
  record: string,
  done: RunOnceRecord,
  lock: LockHandle,
  read: ReadOptions,
): Promise<boolean> {
  let lost: LockLostError | undefined;
  try {
    if (await backend.writeRecord(record, { ...done }, { ...read, expectedVersion: null, whileHolding: lock }))
      return true;
  } catch (error) {
    if (!(error instanceof LockLostError)) throw error;
    lost = error;
  }
  if ((await backend.readRecord(record, read))?.data.runId === done.runId) return true;
  if (lost) throw lost;
  return false;
}

function resolveRunOnceOptions(
  fn: unknown,
  options: RunOnceOptions | undefined,
): { timeoutMs: number; signal: AbortSignal | undefined; by: string } {
  if (typeof fn !== 'function') throw new InvalidOptionError('fn', fn, 'the function to run once');
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new InvalidOptionError('options', options, 'an object such as { timeoutMs: 600000 }');
  }
  assertKnownOptions(options ?? {}, ['timeoutMs', 'signal', 'by'], 'runOnce');
  const { timeoutMs = Infinity, signal, by = `${hostname()}:${process.pid}` } = options ?? {};
  checkTimeoutMs(timeoutMs);
  if (typeof by !== 'string' || by === '') throw new InvalidOptionError('by', by, 'a non-empty string');
  return { timeoutMs, signal, by };
}
