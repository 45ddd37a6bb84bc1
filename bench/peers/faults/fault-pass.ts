/**
 * The fault trials of the peers pass (issue 38): every fault of ./fault-scenarios.ts struck
 * at every compared lock, `reps` times, each trial read by the checker. The locks of one
 * fault run side by side, each on its own servers and keys; its repetitions one after
 * another. Every server, proxy and worker started is stopped before the pass returns, also
 * when it fails; their pids are in the results for a caller to check.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';

import { Pool } from 'pg';

import { PgFence } from '../../../lib/postgres/index.js';
import { PgServer } from '../../../test/support/postgres/pg-server.js';
import { PEER_IDS, type PeerId } from '../peer-lock.js';
import { FAULT_TTLS, makeRig } from './fault-rigs.js';
import {
  caseNote,
  casesFor,
  caseTitle,
  FAULT_IDS,
  notApplicable,
  type FaultCase,
  type FaultId,
  type RestartVariant,
} from './fault-scenarios.js';
import { A_WORK_TTLS, B_WORK_TTLS, runTrial, STRIKE_AFTER_MS, WRITE_EVERY_MS, type FaultTrial } from './fault-trial.js';
import { summarise, type TrialSummary } from './overlap-checker.js';
import { startGate, type StartGate } from './start-gate.js';

export { faultMarkdown } from './fault-report.js';

export interface FaultPassOptions {
  /** Trials per fault case and lock (the page's figures: at least 20). */
  readonly reps: number;
  /** Every lock's TTL, and ours' session timeout, ms. Default 2000. */
  readonly ttlMs?: number;
  /** The locks to try; default all of `PEER_IDS`. */
  readonly peers?: readonly PeerId[];
  /** The faults to strike; default all of `FAULT_IDS`. */
  readonly scenarios?: readonly FaultId[];
  /** The PostgreSQL the holders write to; default a throwaway server of the pass's own. */
  readonly pgUrl?: string;
  /** The schema its tables go in (made and dropped by the pass); default `public`. */
  readonly pgSchema?: string;
  /** Told a line per trial, and per fault. */
  readonly log?: (line: string) => void;
  /**
   * Rigs per fault case and lock, each on servers of its own, the repetitions shared among
   * them and run side by side (default 1: one after another). A trial mostly waits (for a
   * TTL, a pause, a restart), so two rigs halve the pass on a 2-core machine.
   */
  readonly parallel?: number;
}

/** One fault case for one lock: its trials and their summary, or why the lock sits it out. */
export interface FaultRow {
  readonly fault: FaultId;
  readonly variant?: RestartVariant;
  readonly peer: PeerId;
  /** Why this lock sits out this case (no trials then). */
  readonly notApplicable?: string;
  /** How the fault struck this lock differently (redlock-3's one server of three, say). */
  readonly note?: string;
  /** A's grants carried a fencing token (only then is there a fenced row to count). */
  readonly fenced: boolean;
  readonly summary: TrialSummary;
  /** Trials that went wrong as trials (see `FaultTrial.error`). */
  readonly failedTrials: number;
  /** Pause trials whose pause found no gap between two of A's writes (see fault-rigs.ts `pauseA`). */
  readonly pausedInsideWrite: number;
  readonly trials: readonly FaultTrial[];
  /** The rig itself failed (its servers would not start): the trials that ran, if any, are above. */
  readonly error?: string;
}

export interface FaultResults {
  readonly schema: 1;
  readonly kind: 'peer-faults';
  readonly reps: number;
  readonly ttlMs: number;
  /** What every trial did, ms. */
  readonly settings: {
    readonly writeEveryMs: number;
    readonly strikeAfterMs: number;
    readonly faultMs: number;
    readonly aWorkMs: number;
    readonly bWorkMs: number;
  };
  readonly meta: {
    readonly startedAt: string;
    readonly wallMs: number;
    readonly redis?: string;
    readonly machine: { readonly cpus: number; readonly loadavgStart: number[]; readonly loadavgEnd: number[] };
  };
  /** Every process the pass started (servers, their restarts, workers, its own PostgreSQL): all gone by its end. */
  readonly processes: number[];
  readonly rows: FaultRow[];
}

/** The tables the holders write to, made for the pass and dropped after it. */
interface Store {
  readonly url: string;
  readonly admin: Pool;
  readonly fenceTable: string;
  readonly dataTable: string;
}

async function openStore(url: string, schema: string): Promise<Store> {
  const suffix = randomBytes(4).toString('hex');
  const admin = new Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
  const store = {
    url,
    admin,
    fenceTable: `${schema}.peer_fault_fence_${suffix}`,
    dataTable: `${schema}.peer_fault_data_${suffix}`,
  };
  try {
    await admin.query(`CREATE TABLE ${store.dataTable} (id text PRIMARY KEY, n int NOT NULL DEFAULT 0, last text)`);
    await new PgFence(admin, { table: store.fenceTable }).install();
    return store;
  } catch (error) {
    await closeStore(store);
    throw error;
  }
}

async function closeStore(store: Store): Promise<void> {
  await store.admin.query(`DROP TABLE IF EXISTS ${store.dataTable}, ${store.fenceTable}`).catch(() => undefined);
  await store.admin.end();
}

function redisVersion(): string | undefined {
  try {
    return /v=(\S+)/.exec(execFileSync('/usr/bin/redis-server', ['--version'], { encoding: 'utf8' }))?.[1];
  } catch {
    return undefined;
  }
}

/** Runs the trials (see the file's comment) and resolves with every one and their summaries. */
export async function runFaultPass(options: FaultPassOptions): Promise<FaultResults> {
  const { reps, ttlMs = 2000, peers = PEER_IDS, scenarios = FAULT_IDS, log = () => undefined } = options;
  const parallel = Math.min(options.parallel ?? 1, reps);
  if (!(Number.isInteger(reps) && reps >= 1)) throw new RangeError(`reps must be a whole number ≥ 1, got ${reps}.`);
  if (!(Number.isInteger(parallel) && parallel >= 1))
    throw new RangeError(`parallel must be a whole number ≥ 1, got ${options.parallel}.`);
  if (!(ttlMs >= 200)) throw new RangeError(`ttlMs must be at least 200 (ZooKeeper ticks of 20 ms), got ${ttlMs}.`);
  const startedAt = new Date();
  const loadavgStart = loadavg();
  const began = process.hrtime.bigint();
  const processes = new Set<number>();
  const started = (pid: number | undefined): void => void (pid !== undefined && processes.add(pid));
  const rows: FaultRow[] = [];
  const gate = startGate(Math.max(2, cpus().length));
  const server = options.pgUrl ? undefined : new PgServer();
  try {
    await server?.start();
    started(server?.pid);
    const store = await openStore(options.pgUrl ?? server!.url, options.pgSchema ?? 'public');
    try {
      for (const fault of scenarios) {
        log(`fault ${caseTitle({ fault })}: ${peers.join(', ')}`);
        rows.push(...(await runFault(fault, { peers, reps, parallel, ttlMs, store, started, log, gate })));
      }
    } finally {
      await closeStore(store);
    }
  } finally {
    await server?.destroy();
  }
  return {
    schema: 1,
    kind: 'peer-faults',
    reps,
    ttlMs,
    settings: {
      writeEveryMs: WRITE_EVERY_MS,
      strikeAfterMs: STRIKE_AFTER_MS,
      faultMs: FAULT_TTLS * ttlMs,
      aWorkMs: A_WORK_TTLS * ttlMs,
      bWorkMs: B_WORK_TTLS * ttlMs,
    },
    meta: {
      startedAt: startedAt.toISOString(),
      wallMs: Math.round(Number(process.hrtime.bigint() - began) / 1e6),
      ...(peers.some((peer) => peer !== 'ours') ? { redis: redisVersion() } : {}),
      machine: { cpus: cpus().length, loadavgStart, loadavgEnd: loadavg() },
    },
    processes: [...processes],
    rows,
  };
}

interface FaultRun {
  readonly peers: readonly PeerId[];
  readonly reps: number;
  readonly parallel: number;
  readonly ttlMs: number;
  readonly store: Store;
  readonly started: (pid: number | undefined) => void;
  readonly log: (line: string) => void;
  /** Worker starts at a time, over every lock of the fault (at least two: A's and B's). */
  readonly gate: StartGate;
}

/**
 * One fault for every lock: the locks' n-th cases side by side (for `restart`, ours on
 * ZooKeeper beside the Redis locks without persistence, then the Redis locks with AOF),
 * rows in the order of the cases, then of the locks.
 */
async function runFault(fault: FaultId, run: FaultRun): Promise<FaultRow[]> {
  const lanes = run.peers.flatMap((peer) =>
    casesFor(fault, peer).map((faultCase, round) => ({ peer, faultCase, round })),
  );
  const rows = new Map<(typeof lanes)[number], FaultRow>();
  const rounds = Math.max(0, ...lanes.map((lane) => lane.round + 1));
  for (let round = 0; round < rounds; round++) {
    const now = lanes.filter((lane) => lane.round === round);
    const done = await Promise.all(now.map((lane) => runLane(lane.peer, lane.faultCase, run)));
    now.forEach((lane, i) => rows.set(lane, done[i]));
  }
  const variantOrder = (lane: (typeof lanes)[number]): number =>
    ['redis-none', 'redis-aof', 'zookeeper', undefined].indexOf(lane.faultCase.variant);
  const peerOrder = (lane: (typeof lanes)[number]): number => run.peers.indexOf(lane.peer);
  return [...lanes]
    .sort((x, y) => variantOrder(x) - variantOrder(y) || peerOrder(x) - peerOrder(y))
    .map((lane) => rows.get(lane)!);
}

/**
 * Every trial of one case for one lock: `run.parallel` rigs side by side, each of its own
 * servers (destroyed at its end) and taking the repetitions in turn.
 */
async function runLane(peer: PeerId, faultCase: FaultCase, run: FaultRun): Promise<FaultRow> {
  const base = {
    fault: faultCase.fault,
    ...(faultCase.variant ? { variant: faultCase.variant } : {}),
    peer,
    ...(caseNote(faultCase, peer) ? { note: caseNote(faultCase, peer) } : {}),
  };
  const reason = notApplicable(faultCase, peer);
  if (reason)
    return {
      ...base,
      notApplicable: reason,
      fenced: false,
      summary: summarise([]),
      failedTrials: 0,
      pausedInsideWrite: 0,
      trials: [],
    };
  const trials: FaultTrial[] = [];
  const errors: string[] = [];
  let next = 1;
  const rigRun = async (): Promise<void> => {
    const rig = makeRig(faultCase, { peer, ttlMs: run.ttlMs, started: run.started });
    try {
      for (let rep = next++; rep <= run.reps; rep = next++) {
        const trial = await runTrial({
          peer,
          faultCase,
          rig,
          rep,
          ttlMs: run.ttlMs,
          store: run.store,
          started: run.started,
          gate: run.gate,
        });
        trials.push(trial);
        run.log(trialLine(caseTitle(faultCase), peer, rep, run.reps, trial));
      }
    } catch (caught) {
      errors.push(caught instanceof Error ? caught.message : String(caught));
    } finally {
      await rig.destroy().catch((caught: unknown) => errors.push(`destroying its servers: ${String(caught)}`));
    }
  };
  await Promise.all(Array.from({ length: run.parallel }, rigRun));
  trials.sort((x, y) => x.rep - y.rep);
  const error = errors.length ? errors.join('; ') : undefined;
  return {
    ...base,
    fenced: trials.some((trial) => trial.a.token !== undefined),
    summary: summarise(trials.map((trial) => trial.check)),
    failedTrials: trials.filter((trial) => trial.error !== undefined).length,
    pausedInsideWrite: trials.filter((trial) => trial.aPaused?.betweenWrites === false).length,
    trials,
    ...(error === undefined ? {} : { error }),
  };
}

function trialLine(title: string, peer: PeerId, rep: number, reps: number, trial: FaultTrial): string {
  const { check } = trial;
  const told = check.toldFirst === null ? '—' : check.toldFirst ? 'yes' : 'no';
  const stale = `${check.staleWrites.fenced.landed}+${check.staleWrites.fenced.refused}r/${check.staleWrites.unfenced.landed}`;
  return (
    `${title} · ${peer} ${rep}/${reps}: ${check.overlapped ? `overlap ${check.overlapMs.toFixed(0)} ms` : 'no overlap'}, ` +
    `told first ${told}, stale fenced+refused/unfenced ${stale}` +
    (trial.a.told ? `; A told: ${trial.a.told}` : '') +
    (trial.note ? `; ${trial.note}` : '') +
    (trial.error ? `; FAILED: ${trial.error}` : '')
  );
}
