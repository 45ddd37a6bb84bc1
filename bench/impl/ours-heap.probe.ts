/**
 * The client heap per held lock (scenarios 4 and 12), measured in a process of its own:
 * node --expose-gc -r ./scripts/ts-register.cjs bench/impl/ours-heap.probe.ts <connectionString> <rootPath> <params as JSON>
 * prints a `HeldLocksResult` as JSON. Forced full collections (`gc()`) make V8 drop the
 * optimized code of the process that runs them: the benchmark's long-lived worker, which
 * measured the heap itself until then, ran every scenario after scenario 4 about three
 * times slower in client CPU until its JIT had warmed up again. Here they touch nothing else.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { LockHandle } from '../../lib/core/port/lock-backend.js';
import { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import { serversOf } from '../support/server-state.js';
import { ephemeralsOf, mntr, totalWatches } from '../support/server-stats.js';
import type { HeldLocksResult } from '../workers/impl.protocol.js';
import { counts, now, range } from './bench-impl.js';

const ROOT = join(__dirname, '..', '..');

export interface HeapProbeParams {
  readonly prefix: string;
  readonly locks: number;
  /** Taken `batch` at a time, each batch at once (`Promise.all`), as a user's code would. */
  readonly batch: number;
  /** Names taken (and released) once first, the same way: the code paths warm, their directories created and swept. */
  readonly warm: number;
  /**
   * Also the servers' side (scenario 12; needs `mntr` and `wchs`): their figures while
   * holding, the releases until confirmed, and what is left after them.
   */
  readonly server: boolean;
}

/** Runs the probe in a child process and returns its figures (without `server`, only the heap and times are real). */
export function runHeapProbe(
  connectionString: string,
  rootPath: string,
  params: HeapProbeParams,
): Promise<HeldLocksResult> {
  const args = [
    '--expose-gc',
    '-r',
    join(ROOT, 'scripts', 'ts-register.cjs'),
    __filename,
    connectionString,
    rootPath,
    JSON.stringify(params),
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, timeout: 300_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`heap probe failed: ${stderr || error.message}`));
      resolve(JSON.parse(stdout) as HeldLocksResult);
    });
  });
}

/**
 * Takes `warm` names once, waits until the background work that leaves behind is over,
 * then takes `locks` fresh names and holds them: heapUsed after full collections, holding
 * minus before, per lock; then releases them all.
 */
async function probe(connectionString: string, rootPath: string, params: HeapProbeParams): Promise<HeldLocksResult> {
  const { prefix, locks, batch, warm } = params;
  const backend = await ZkLockBackend.connect({ connectionString, rootPath });
  const servers = serversOf(connectionString);
  try {
    await inBatches(range(warm), batch, async (i) => (await backend.acquire(`${prefix}-${i}`)).release());
    // Background work (e.g. directory clean-up) must be over, or its state coming and going lands in the difference.
    await quiesce(backend);
    // Allocated before the baseline, so only what the library keeps per lock is counted.
    const handles: Array<LockHandle | undefined> = new Array(locks).fill(undefined);
    const held = range(locks).map((i) => `${prefix}-held-${i}`);
    const sessionId = backend.client.session.id;
    const before = params.server ? await serverState(servers, sessionId) : undefined;
    const baseline = heapAfterGc();
    const start = now();
    await inBatches(range(locks), batch, async (i) => (handles[i] = await backend.acquire(held[i])));
    const acquireNs = Number(now() - start);
    const holding = heapAfterGc();
    const during = before && (await serverState(servers, sessionId));
    const releaseStart = now();
    await Promise.all(handles.map((handle) => handle!.release()));
    await Promise.all(handles.map((handle) => handle!.releaseConfirmed));
    const releaseNs = Number(now() - releaseStart);
    // Their empty directories swept before the session closes: rounds do not pile them up under the root.
    if (params.server) await quiesce(backend);
    const listed = before ? (await backend.locks(`${prefix}-held-`)).length : 0;
    return {
      heapPerLockBytes: (holding - baseline) / locks,
      acquireNs,
      releaseNs,
      server: before && during ? grownBy(before, during) : { dataBytes: 0, znodes: 0, ephemerals: 0, watches: 0 },
      left: { listed, ephemerals: before ? await ephemeralsLeft(servers[0], sessionId) : 0 },
    };
  } finally {
    await backend.close();
  }
}

/** Each of `items`, `size` at a time: a batch at once, batches one after another. */
async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < items.length; from += size) await Promise.all(items.slice(from, from + size).map(each));
}

interface ServerState {
  readonly dataBytes: number;
  readonly znodes: number;
  readonly ephemerals: number;
  readonly watches: number;
}

/**
 * The data tree's figures from the first server (every server holds a copy), the session's
 * own ephemeral nodes, and the watches summed over every server (each holds its sessions').
 */
async function serverState(servers: readonly string[], sessionId: string): Promise<ServerState> {
  const [tree, ephemerals, watches] = await Promise.all([
    mntr(servers[0]),
    ephemeralsOf(servers[0], sessionId),
    totalWatches(servers),
  ]);
  return { dataBytes: tree.zk_approximate_data_size, znodes: tree.zk_znode_count, ephemerals, watches };
}

function grownBy(before: ServerState, after: ServerState): ServerState {
  return {
    dataBytes: after.dataBytes - before.dataBytes,
    znodes: after.znodes - before.znodes,
    ephemerals: after.ephemerals - before.ephemerals,
    watches: after.watches - before.watches,
  };
}

/** The session's ephemeral nodes, once a server that may lag behind the session's has caught up (at most 5 s). */
async function ephemeralsLeft(server: string, sessionId: string): Promise<number> {
  const until = Date.now() + 5_000;
  for (;;) {
    const left = await ephemeralsOf(server, sessionId);
    if (left === 0 || Date.now() > until) return left;
    await sleep(100);
  }
}

/** Waits until the client has sent nothing but heartbeats for a while (at most 15 s). */
async function quiesce(backend: ZkLockBackend, quietMs = 1_500): Promise<void> {
  const busy = (): number =>
    Object.entries(counts(backend)).reduce((sum, [op, n]) => (op === 'heartbeat' ? sum : sum + n), 0);
  const until = Date.now() + 15_000;
  let last = busy();
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs && Date.now() < until) {
    await sleep(100);
    const now = busy();
    if (now !== last) {
      last = now;
      quietSince = Date.now();
    }
  }
}

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) global.gc!();
  return process.memoryUsage().heapUsed;
}

if (require.main === module) {
  const [connectionString, rootPath, params] = process.argv.slice(2);
  probe(connectionString, rootPath, JSON.parse(params) as HeapProbeParams).then(
    (result) => {
      process.stdout.write(JSON.stringify(result));
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
