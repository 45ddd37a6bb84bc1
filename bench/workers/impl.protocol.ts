/**
 * What the orchestrator (bench/runner.ts) asks each implementation's worker process,
 * and what the worker answers. The Node workers (`ours`, `raw`), the Kazoo worker
 * (bench/kazoo/kazoo_bench.worker.py) and the Curator worker
 * (bench/curator/CuratorBenchWorker.java) speak the same protocol: one JSON object per
 * line, `{ id, op, params }` in, `{ id, result }` or `{ id, error }` out, after a first
 * `{ ready: true, ... }` line.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, as decimal strings (they can exceed 2^53):
 * Node's `process.hrtime.bigint()`, Python's `time.monotonic_ns()` and Java's
 * `System.nanoTime()` (on Linux) all read CLOCK_MONOTONIC, one clock for the whole
 * machine, so a timestamp taken in one process can be subtracted from one taken in another
 * (the runner checks this at start-up).
 */

export type ImplName = 'ours' | 'raw' | 'kazoo' | 'curator';
export const IMPLS: readonly ImplName[] = ['ours', 'raw', 'kazoo', 'curator'];
/** What ours is compared with: every ratio is ours ÷ one of these. */
export type OtherImpl = Exclude<ImplName, 'ours'>;
export const OTHER_IMPLS: readonly OtherImpl[] = ['raw', 'kazoo', 'curator'];

/**
 * Requests sent by operation (`create`, `getChildren`, `getData`, `remove`, `exists`, …),
 * plus `notification` (watch events received) and `heartbeat` (liveness pings the library
 * sends on its own timer; not part of any lock operation).
 */
export type Counts = Record<string, number>;

export interface ReadyLine {
  readonly ready: true;
  readonly impl: ImplName;
  readonly pid: number;
  /** The client library's version, e.g. "node-zookeeper-client 1.1.3", "kazoo 2.8.0" or "curator 5.4.0 (…)". */
  readonly version: string;
}

export interface ClockResult {
  readonly now: string;
}

/** Scenario 1: one lock, acquire + release in a serial loop. */
export interface UncontendedParams {
  readonly name: string;
  readonly cycles: number;
  readonly warmup: number;
}
export interface UncontendedResult {
  readonly cycles: number;
  readonly elapsedNs: number;
  /** Sent during the timed cycles only. */
  readonly counts: Counts;
  /** Raw only: as many cycles again with the read sent behind the create (`pipelinedCycle`), right after. */
  readonly pipelined?: { readonly cycles: number; readonly elapsedNs: number };
  /** Raw only: as many again on a session spoken by hand, the same requests (`WireSession`). */
  readonly wire?: { readonly cycles: number; readonly elapsedNs: number };
}

/** Scenario 2: two workers pass one lock back and forth, driven step by step. */
export interface HandoffOpenParams {
  readonly name: string;
}
export interface HoldResult {
  /** Taken right after the acquire call returned the grant. */
  readonly grantedAt: string;
}
export interface ReleaseResult {
  /** Taken right before the release call. */
  readonly releasedAt: string;
}
export interface HandoffCloseResult {
  /** Everything sent between `handoff.open` (once connected) and `handoff.close`. */
  readonly counts: Counts;
}

/** Scenario 3: a holder and N queued waiters, each in its own session. */
export interface DrainSetupParams {
  readonly name: string;
  readonly waiters: number;
}
export interface DrainGoResult {
  /** From right before the holder's release to the last waiter's release completing. */
  readonly drainNs: number;
  /** Summed over the holder's and every waiter's session, over the drain. */
  readonly counts: Counts;
}

/** Scenario 4: many distinct locks from one client at once. */
export interface ManyLocksParams {
  readonly prefix: string;
  readonly locks: number;
  readonly cyclesPerLock: number;
  readonly measureMemory: boolean;
}
export interface ManyLocksResult {
  readonly cycles: number;
  readonly elapsedNs: number;
  readonly counts: Counts;
  /** heapUsed delta (after full GCs) while holding `locks` locks, divided by `locks`; null if not measured. */
  readonly heapPerLockBytes: number | null;
}

/** Scenario 5: reentrant acquire of a lock the call chain already holds. */
export interface ReentrantParams {
  readonly name: string;
  readonly calls: number;
  readonly warmup: number;
}
export interface ReentrantResult {
  readonly calls: number;
  readonly elapsedNs: number;
  /** Sent during the timed nested calls (should be nothing but, at most, a heartbeat). */
  readonly counts: Counts;
}

/** Scenario 6: R readers in a loop and one writer on the same name. */
export interface ReadHeavyParams {
  readonly name: string;
  readonly readers: number;
  readonly durationMs: number;
  /** The writer sleeps this long between its acquires. */
  readonly writerPauseMs: number;
  /**
   * Every acquire gives up after this long and the loop goes on, counting a stall. Kazoo
   * 2.8's ReadLock waits on a *higher* writer, which waits on it: a deadlock that only a
   * timeout breaks (Kazoo #649); the same timeout applies to every implementation.
   */
  readonly stallTimeoutMs: number;
}
export interface ReadHeavyResult {
  /** Reader acquire + release cycles completed within the measured window. */
  readonly readerCycles: number;
  readonly elapsedNs: number;
  /** Each writer acquire: from the call to the grant, or to giving up (a stall). */
  readonly writerWaitsNs: number[];
  /** Acquires given up after `stallTimeoutMs`. */
  readonly readerStalls: number;
  readonly writerStalls: number;
  /** Summed over every session, over the measured window and the wind-down. */
  readonly counts: Counts;
  /** Reader and writer cycles the counts cover. */
  readonly countedCycles: number;
}

/** Scenario 9: transactions of idle and holding sessions, and an acquire after idle against a warm one. */
export interface IdleParams {
  readonly name: string;
  readonly clients: number;
  readonly sessionTimeoutMs: number;
  readonly holdMs: number;
  readonly warmAcquires: number;
}
export interface IdleResult {
  /** Transactions the server committed (its `srvr` zxid) while `clients` sessions were idle for `idleMs`. */
  readonly idleTransactions: number;
  readonly idleMs: number;
  /** The same while one session held a lock for `holdMs` (the others closed). */
  readonly holdTransactions: number;
  readonly holdMs: number;
  /** Each session's first acquire after the idle window, call to grant. */
  readonly afterIdleNs: number[];
  /** Acquires right after a release on the same session, call to grant. */
  readonly warmNs: number[];
}

/**
 * Scenario 10: this process's share of C sessions, each on one server and a lock of its
 * own (`<prefix>-<index>`, `index` numbering the sessions across every process). Setup
 * connects them and runs one cycle on each (lock directories made, first-use costs paid).
 */
export interface CapacitySetupParams {
  readonly prefix: string;
  readonly sessions: ReadonlyArray<{ readonly index: number; readonly server: string }>;
}
/**
 * Every session loops acquire + release from the moment the request arrives until a cycle
 * ends at or after the window's end; CLOCK_MONOTONIC ns as decimal strings.
 */
export interface CapacityGoParams {
  readonly windowStartNs: string;
  readonly windowEndNs: string;
}
export interface CapacityGoResult {
  /** Cycles that ended within the window. */
  readonly windowCycles: number;
  /** Every cycle of the loop; all of them ended, and the server answered all they sent, before this answer. */
  readonly cycles: number;
  /** Sent over every cycle, summed over the sessions. */
  readonly counts: Counts;
  /** This process's CPU time between its readings at the window's start and end, and the time between them. */
  readonly windowCpuNs: number;
  readonly windowSampledNs: number;
}

/**
 * Scenario 11: many sessions of ours (one `ZkLockBackend` each), spread over worker
 * processes of their own that the worker starts (`processes`; each of those is asked with
 * `processes: 0`, all in itself). The other `sessions.*` ops act on them until `sessions.close`.
 */
export interface SessionsOpenParams {
  readonly sessions: number;
  readonly processes: number;
}
export interface SessionsOpenResult {
  /** From the first connect to the last session connected. */
  readonly elapsedNs: number;
  /** Each session's connect, call to connected. */
  readonly connectNs: number[];
  /** Each session's id, in hex (`ZkSession.id`). */
  readonly sessionIds: string[];
}
/** `holders` of the sessions, spread over the processes, each acquire a lock of its own (`<name>-…`). */
export interface SessionsHoldParams {
  readonly name: string;
  readonly holders: number;
}
export interface SessionsHoldResult {
  /** Each acquire, call to grant. */
  readonly acquireNs: number[];
}
/** Counted so far over every session, and the CPU of every process hosting them. */
export interface SessionsStatsResult {
  readonly counts: Counts;
  /** Of those requests, the writes (the library's own count: the heartbeat is a write only while something is held). */
  readonly writes: number;
  readonly cpuNs: number;
}
export interface SessionsCloseResult {
  /** From the first close to the last one returned. */
  readonly elapsedNs: number;
}

/** Scenario 12: `locks` distinct names held at once by one session, taken `batch` at a time. */
export interface HeldLocksParams {
  readonly prefix: string;
  readonly locks: number;
  readonly batch: number;
}
export interface HeldLocksResult {
  /** heapUsed after full GCs while holding them all, minus before, per lock (a probe process of its own). */
  readonly heapPerLockBytes: number;
  /** Every lock acquired, `batch` at a time. */
  readonly acquireNs: number;
  /** Every lock's `release()` called, until ZooKeeper confirmed every one. */
  readonly releaseNs: number;
  /**
   * The servers while holding, minus before: data size (bytes) and znodes (`mntr`), the
   * session's ephemeral nodes (`dump`), watches (`wchs`, every server).
   */
  readonly server: {
    readonly dataBytes: number;
    readonly znodes: number;
    readonly ephemerals: number;
    readonly watches: number;
  };
  /** After the releases: locks the library still lists under the prefix, and the session's ephemeral nodes (`dump`). */
  readonly left: { readonly listed: number; readonly ephemerals: number };
}

export type WorkerOp =
  | 'clock'
  /** The worker process's CPU time so far (user + system, every thread), ns as a decimal string: `{ cpuNs }`. */
  | 'cpu'
  | 'uncontended'
  | 'handoff.open'
  | 'handoff.hold'
  | 'handoff.release'
  | 'handoff.close'
  | 'drain.setup'
  | 'drain.go'
  | 'manyLocks'
  | 'reentrant'
  | 'readHeavy'
  | 'multiLock'
  | 'leases'
  | 'idle'
  | 'capacity.setup'
  | 'capacity.go'
  | 'capacity.close'
  | 'sessions.open'
  | 'sessions.hold'
  | 'sessions.release'
  | 'sessions.stats'
  | 'sessions.close'
  | 'heldLocks'
  | 'quit';
