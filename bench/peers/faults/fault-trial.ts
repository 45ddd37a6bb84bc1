/**
 * One fault trial: a fresh key; holder A (a worker of its own) takes the lock and works,
 * writing every 50 ms; the moment A reports its grant, holder B (another worker) asks for
 * the same lock; ~200 ms after A's grant the fault strikes; then both holds run out and the
 * checker reads their events. Both workers are closed (killed if they will not close) and
 * the rig settled whatever happens.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Pool } from 'pg';

import type { PeerId } from '../peer-lock.js';
import { PeerWorker } from '../peer-worker.js';
import type { HoldEvent, PeerWorkerArgs } from '../peer-worker.protocol.js';
import type { FaultRig, StrikeRecord } from './fault-rigs.js';
import type { FaultCase } from './fault-scenarios.js';
import type { StartGate } from './start-gate.js';
import { checkTrial, type TrialCheck } from './overlap-checker.js';

/** How often a holder writes, ms. */
export const WRITE_EVERY_MS = 50;
/** How long after A's grant the fault strikes, ms. */
export const STRIKE_AFTER_MS = 200;
/** How long A works, in TTLs: past the end of a 1.5 × TTL fault that began 200 ms in, by most of a TTL. */
export const A_WORK_TTLS = 2.5;
/**
 * How long B works once granted, in TTLs: as long as A, so that B, granted after A, holds
 * until after A's hold ended and an overlap ends on A's side (A told, or done).
 */
export const B_WORK_TTLS = A_WORK_TTLS;

/** The PostgreSQL the holders write to: the pass's tables, and a pool of the parent's for the rows. */
export interface TrialStore {
  readonly url: string;
  readonly fenceTable: string;
  readonly dataTable: string;
  readonly admin: Pool;
}

export interface TrialOptions {
  readonly peer: PeerId;
  readonly faultCase: FaultCase;
  readonly rig: FaultRig;
  readonly rep: number;
  readonly ttlMs: number;
  readonly store: TrialStore;
  /** Told of each worker process started. */
  readonly started: (pid: number | undefined) => void;
  /** What each worker's start goes through (the pass shares one among the locks running side by side). */
  readonly gate: StartGate;
}

/** One trial, as the results keep it (JSON-serialisable). */
export interface FaultTrial {
  readonly rep: number;
  readonly key: string;
  /** The checker's reading; all false and zero when the trial failed before A's grant. */
  readonly check: TrialCheck;
  /** A's fencing token, and how A was told it lost the lock and how its `run` ended, if it was / rejected. */
  readonly a: { readonly token?: string; readonly told?: string; readonly error?: string };
  readonly b: { readonly error?: string };
  /** When the fault stopped A (the pause), hrtime ns strings. */
  readonly aPaused?: StrikeRecord['aPaused'];
  readonly note?: string;
  /** What went wrong with the trial itself (a worker that failed, a fault that could not strike). */
  readonly error?: string;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Resolves when `hold` settles: undefined, or why it rejected, or after `timeoutMs` with a note of it. Never rejects. */
function settled(hold: Promise<unknown>, timeoutMs: number, who: string): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`${who}'s hold did not end within ${timeoutMs} ms`), timeoutMs);
  });
  return Promise.race([hold.then(() => undefined, messageOf), timeout]).finally(() => clearTimeout(timer));
}

/** A resolve function and its promise. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The events that end a hold (see overlap-checker.ts). */
const HOLD_ENDS: readonly HoldEvent['type'][] = ['told-lost', 'stopped', 'releasing', 'hold-done'];

/** The `at` (ns) at which A's hold ended as far as its events say: its first end event. */
function holdEndOf(events: readonly HoldEvent[]): bigint | undefined {
  const ends = events.filter((event) => HOLD_ENDS.includes(event.type));
  return ends.length === 0 ? undefined : ends.map((event) => BigInt(event.at)).reduce((x, y) => (x < y ? x : y));
}

/** The two holders of a trial: their workers, their events as they come, and the moments the trial waits for. */
class Holders {
  readonly aEvents: HoldEvent[] = [];
  readonly bEvents: HoldEvent[] = [];
  readonly aGranted = deferred<HoldEvent>();
  readonly bGranted = deferred<HoldEvent>();
  /** B's hold ended (its first end event: told, stopped, releasing or done). */
  readonly bHoldEnded = deferred<HoldEvent>();
  private bHold: Promise<unknown> = Promise.resolve();
  private aOver = false;
  private readonly writeWaiters: Array<(done: { nextDue: bigint } | undefined) => void> = [];
  /** A's unfenced writes so far: the n-th (from 0) ends the pair due at grant + n × writeEveryMs. */
  private aWrites = 0;

  constructor(
    readonly a: PeerWorker,
    readonly b: PeerWorker,
  ) {}

  /** Sends A its hold, and B its own the moment A reports its grant; resolves when A's hold settles. */
  start(key: string, aWorkMs: number, bWorkMs: number): Promise<unknown> {
    const onA = (event: HoldEvent): void => {
      this.aEvents.push(event);
      if (event.type === 'granted') {
        this.bHold = this.b.hold({ key, holder: 'B', workMs: bWorkMs, writeEveryMs: WRITE_EVERY_MS }, (e) => {
          this.bEvents.push(e);
          if (e.type === 'granted') this.bGranted.resolve(e);
          if (HOLD_ENDS.includes(e.type)) this.bHoldEnded.resolve(e);
        });
        this.aGranted.resolve(event);
      }
      if (event.type === 'write' && event.row === 'unfenced') {
        const grant = BigInt(this.aEvents.find((e) => e.type === 'granted')!.at);
        const nextDue = grant + BigInt(++this.aWrites * WRITE_EVERY_MS) * 1_000_000n;
        for (const wake of this.writeWaiters.splice(0)) wake({ nextDue });
      }
    };
    return this.a.hold({ key, holder: 'A', workMs: aWorkMs, writeEveryMs: WRITE_EVERY_MS }, onA).finally(() => {
      this.aOver = true;
      for (const wake of this.writeWaiters.splice(0)) wake(undefined);
    });
  }

  /** B's hold (settled at once until B was sent it). */
  get bHeld(): Promise<unknown> {
    return this.bHold;
  }

  /** See `StrikeContext.nextWriteDone`. */
  nextWriteDone(): Promise<{ nextDue: bigint } | undefined> {
    return this.aOver ? Promise.resolve(undefined) : new Promise((resolve) => this.writeWaiters.push(resolve));
  }

  /** B was granted at or after the end of A's hold: whatever B does next, the holds did not overlap. */
  bGrantedAfterA(): boolean {
    const bGrant = this.bEvents.find((event) => event.type === 'granted');
    const aEnd = holdEndOf(this.aEvents);
    return bGrant !== undefined && aEnd !== undefined && BigInt(bGrant.at) >= aEnd;
  }
}

/** Starts A's and B's workers; if either fails, closes the other and rejects. */
async function startWorkers(
  args: readonly PeerWorkerArgs[],
  { started, gate }: Pick<TrialOptions, 'started' | 'gate'>,
): Promise<PeerWorker[]> {
  const starts = await Promise.allSettled(args.map((arg) => gate(() => PeerWorker.start(arg))));
  const workers = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
  for (const worker of workers) started(worker.pid);
  const failed = starts.find((start) => start.status === 'rejected');
  if (!failed) return workers;
  await Promise.allSettled(workers.map((worker) => worker.close()));
  throw failed.reason;
}

/**
 * Runs one trial (see the file's comment). Never rejects: a failure is the trial's `error`.
 * B is killed rather than waited for once what it does next changes nothing the checker
 * reads: when it was granted only after A's hold ended, or once its own hold ended (its
 * release, which may retry for as long as it may wait for the lock, is not waited for).
 */
export async function runTrial(options: TrialOptions): Promise<FaultTrial> {
  const { peer, faultCase, rig, ttlMs, store } = options;
  const key = `${faultCase.fault}-${faultCase.variant ?? 'x'}-${peer}-${options.rep}-${randomBytes(3).toString('hex')}`;
  const aWorkMs = A_WORK_TTLS * ttlMs;
  const bWorkMs = B_WORK_TTLS * ttlMs;
  // A asks for a fresh key nobody else wants: one TTL is ample, and leaves redlock its
  // default retries (10), which it also spends on each extension.
  const aAcquireMs = ttlMs;
  const bAcquireMs = aWorkMs + 2 * ttlMs + 10_000;
  let holders: Holders | undefined;
  let record: StrikeRecord = {};
  let error: string | undefined;
  try {
    await store.admin.query(`INSERT INTO ${store.dataTable} (id) VALUES ($1), ($2)`, [
      `${key}:fenced`,
      `${key}:unfenced`,
    ]);
    const wiring = await rig.prepare();
    const args = (endpoints: readonly string[], acquireTimeoutMs: number): PeerWorkerArgs => ({
      peer: { id: peer, endpoints, ttlMs, acquireTimeoutMs },
      pg: { url: store.url, fenceTable: store.fenceTable, dataTable: store.dataTable },
    });
    const [a, b] = await startWorkers([args(wiring.a, aAcquireMs), args(wiring.b, bAcquireMs)], options);
    holders = new Holders(a, b);

    await rig.beforeHold();
    const aEnded = settled(holders.start(key, aWorkMs, bWorkMs), aWorkMs + aAcquireMs + 30_000, 'A');
    const grant = await Promise.race([holders.aGranted.promise, aEnded.then(() => undefined)]);
    if (!grant) throw new Error(`A was not granted the lock: ${(await aEnded) ?? 'its hold ended without a grant'}`);

    const strikeIn = Number(BigInt(grant.at) + BigInt(STRIKE_AFTER_MS) * 1_000_000n - process.hrtime.bigint()) / 1e6;
    if (strikeIn > 0) await sleep(strikeIn);
    const trial = holders;
    record = await rig.strike({ key, a, nextWriteDone: () => trial.nextWriteDone() });
    // A hold that ended in the lock's own error still ends with `hold-done`; these are a
    // worker that died or failed, or a hold that never ended.
    error = await aEnded;
    const bEnded = settled(holders.bHeld, bAcquireMs + bWorkMs + 30_000, 'B');
    await Promise.race([holders.bGranted.promise, bEnded]);
    if (!holders.bGrantedAfterA())
      error ??= await Promise.race([holders.bHoldEnded.promise.then(() => undefined), bEnded]);
    b.kill('SIGKILL');
  } catch (caught) {
    error = messageOf(caught);
  } finally {
    const workers = holders ? [holders.a, holders.b] : [];
    for (const worker of workers) worker.kill('SIGCONT');
    await Promise.allSettled(workers.map((worker) => worker.close()));
    await rig.settle().catch((caught: unknown) => (error ??= `settling after the trial: ${messageOf(caught)}`));
  }
  return trialOf(options.rep, key, holders?.aEvents ?? [], holders?.bEvents ?? [], record, error);
}

function trialOf(
  rep: number,
  key: string,
  aEvents: readonly HoldEvent[],
  bEvents: readonly HoldEvent[],
  record: StrikeRecord,
  error: string | undefined,
): FaultTrial {
  const find = <T extends HoldEvent['type']>(events: readonly HoldEvent[], type: T) =>
    events.find((event): event is Extract<HoldEvent, { type: T }> => event.type === type);
  const aGrant = find(aEvents, 'granted');
  const aTold = find(aEvents, 'told-lost');
  const aDone = find(aEvents, 'hold-done');
  const bDone = find(bEvents, 'hold-done');
  return {
    rep,
    key,
    check: checkTrial(aEvents, bEvents, record.aPaused ? { aPaused: record.aPaused } : {}),
    a: {
      ...(aGrant?.token === undefined ? {} : { token: aGrant.token }),
      ...(aTold ? { told: aTold.how } : {}),
      ...(aDone?.error === undefined ? {} : { error: aDone.error }),
    },
    b: bDone?.error === undefined ? {} : { error: bDone.error },
    ...(record.aPaused ? { aPaused: record.aPaused } : {}),
    ...(record.note ? { note: record.note } : {}),
    ...(error === undefined ? {} : { error }),
  };
}
