/**
 * What the peers pass says to a worker process hosting one `PeerLock`, and what it answers,
 * over Node's IPC channel (the worker is `fork`ed: bench/peers/peer.worker.ts). One worker
 * is one client of its lock service, as one instance of a user's service is; the fault
 * trials stop it (SIGSTOP) and cut its connections, so it must be a process of its own.
 *
 * Times are `process.hrtime.bigint()` in ns, sent as decimal strings: the monotonic clock
 * is the machine's (CLOCK_MONOTONIC), so the parent compares the workers' times directly.
 */
import type { PeerConfig } from './peer-lock.js';

/** The worker's argument (argv[2], JSON). */
export interface PeerWorkerArgs {
  readonly peer: PeerConfig;
  /** For fault trials: the PostgreSQL the holder writes to, and the tables (see `HoldCommand`). */
  readonly pg?: { readonly url: string; readonly fenceTable: string; readonly dataTable: string };
}

/** One acquire + body + release, as the worker saw it. */
export interface CycleRecord {
  /** The call began (`run` called). */
  readonly requestedAt: string;
  /** The body began: the lock was granted. */
  readonly grantedAt: string;
  /** The body ended and the release was asked for (`run` then returns once the library released). */
  readonly releasingAt: string;
  /** `run` settled. */
  readonly doneAt: string;
}

/**
 * `loop`: call `run(key, body)` back to back until `cycles` calls have been granted or
 * `durationMs` has passed (whichever comes first; either may be omitted, not both), the
 * body holding for `holdMs` (0: returns at once). A call that fails (timeout, lost) is
 * counted and the loop goes on. Answers `LoopDone`.
 */
export interface LoopCommand {
  readonly cmd: 'loop';
  readonly key: string;
  readonly cycles?: number;
  readonly durationMs?: number;
  readonly holdMs: number;
  /** Start at this hrtime (ns, string) so that several workers begin together; now if omitted. */
  readonly startAt?: string;
}

export interface LoopDone {
  readonly type: 'loop-done';
  readonly cycles: readonly CycleRecord[];
  readonly failures: number;
  /** The first failure's message, if any. */
  readonly firstFailure?: string;
  /** This process's CPU (user + system) over the loop, in µs. */
  readonly cpuUs: number;
}

/**
 * `hold`: the holder of a fault trial. One `run(key, body)`; the body works for `workMs`,
 * writing every `writeEveryMs`: before each write it asks `hold.isHeld()` and stops
 * working (reporting `stopped`) when the library says the lock is gone. Each write is two
 * transactions on PostgreSQL: one to the fenced row (PgFence.check with the lock's token,
 * then `UPDATE <dataTable> SET n = n + 1, last = <holder>` on row `<key>:fenced`; skipped for
 * a lock without a token) and one to the unfenced row (the same UPDATE on `<key>:unfenced`,
 * no check). Events stream as they happen (`HoldEvent`), then `hold-done`.
 */
export interface HoldCommand {
  readonly cmd: 'hold';
  readonly key: string;
  /** Who this holder is, written into the rows and echoed in events. */
  readonly holder: string;
  readonly workMs: number;
  readonly writeEveryMs: number;
}

export type HoldEvent =
  | { readonly type: 'granted'; readonly holder: string; readonly at: string; readonly token?: string }
  /** The library told the holder (the signal aborted, `isHeld()` turned false, or `run` rejected as lost). */
  | { readonly type: 'told-lost'; readonly holder: string; readonly at: string; readonly how: string }
  /** A write committed (`landed`) or refused by the fence (`refused`); `at` is when its COMMIT returned. */
  | {
      readonly type: 'write';
      readonly holder: string;
      readonly at: string;
      readonly row: 'fenced' | 'unfenced';
      readonly outcome: 'landed' | 'refused';
    }
  /** The body stopped early because `isHeld()` said the lock was gone. */
  | { readonly type: 'stopped'; readonly holder: string; readonly at: string }
  /** The body ended and the release was asked for. */
  | { readonly type: 'releasing'; readonly holder: string; readonly at: string }
  /** `run` settled: `error` is its rejection's message, if it rejected. */
  | { readonly type: 'hold-done'; readonly holder: string; readonly at: string; readonly error?: string };

export type PeerCommand = LoopCommand | HoldCommand | { readonly cmd: 'close' };

export type PeerWorkerMessage =
  | { readonly type: 'ready'; readonly pid: number }
  | LoopDone
  | HoldEvent
  | { readonly type: 'closed' }
  /** Anything the worker could not do (its message), after which it exits. */
  | { readonly type: 'fatal'; readonly error: string };
