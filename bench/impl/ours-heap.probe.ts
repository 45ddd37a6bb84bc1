/**
 * Scenario 4's heap per held lock, measured in a process of its own:
 * node --expose-gc -r ./scripts/ts-register.cjs bench/impl/ours-heap.probe.ts <connectionString> <rootPath> <prefix> <locks>
 * prints `{"heapPerLockBytes": …}`. Forced full collections (`gc()`) make V8 drop the
 * optimized code of the process that runs them: the benchmark's long-lived worker, which
 * measured the heap itself until then, ran every scenario after scenario 4 about three
 * times slower in client CPU until its JIT had warmed up again. Here they touch nothing else.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { LockHandle } from '../../lib/core/port/lock-backend.js';
import { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import { counts } from './bench-impl.js';

const ROOT = join(__dirname, '..', '..');

/** Runs the probe in a child process and returns its figure. */
export function measureHeapPerLock(
  connectionString: string,
  rootPath: string,
  prefix: string,
  locks: number,
): Promise<number> {
  const args = [
    '--expose-gc',
    '-r',
    join(ROOT, 'scripts', 'ts-register.cjs'),
    __filename,
    connectionString,
    rootPath,
    prefix,
    String(locks),
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`heap probe failed: ${stderr || error.message}`));
      resolve((JSON.parse(stdout) as { heapPerLockBytes: number }).heapPerLockBytes);
    });
  });
}

/**
 * Takes each name once (creating its directory, as the timed part does), waits until the
 * background work that leaves behind is over, then takes `locks` fresh names and holds
 * them: heapUsed after full collections, holding minus before, per lock.
 */
async function probe(connectionString: string, rootPath: string, prefix: string, locks: number): Promise<number> {
  const backend = await ZkLockBackend.connect({ connectionString, rootPath });
  try {
    const names = Array.from({ length: locks }, (_, i) => `${prefix}-${i}`);
    await Promise.all(names.map(async (name) => (await backend.acquire(name)).release()));
    // Background work (e.g. directory clean-up) must be over, or its state coming and going lands in the difference.
    await quiesce(backend);
    // Allocated before the baseline, so only what the library keeps per lock is counted.
    const handles: Array<LockHandle | undefined> = new Array(locks).fill(undefined);
    const held = names.map((name) => `${name}-held`);
    const baseline = heapAfterGc();
    await Promise.all(held.map(async (name, i) => (handles[i] = await backend.acquire(name))));
    const holding = heapAfterGc();
    await Promise.all(handles.map((handle) => handle!.release()));
    return (holding - baseline) / locks;
  } finally {
    await backend.close();
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
  const [connectionString, rootPath, prefix, locks] = process.argv.slice(2);
  probe(connectionString, rootPath, prefix, Number(locks)).then(
    (heapPerLockBytes) => {
      process.stdout.write(JSON.stringify({ heapPerLockBytes }));
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
