// A separate process contending for one lock: proves mutual exclusion across processes.
// Each critical section claims an exclusive marker file (creation fails with EEXIST if
// another holder is inside) and does a slow read-modify-write of a shared counter file.
import { appendFileSync, openSync, closeSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { ZkLockBackend } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  name: string;
  iterations: number;
  marker: string;
  counter: string;
  /** Fencing tokens appended in grant order, one per line. */
  log: string;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as Args;
  const locks = await ZkLockBackend.connect({ connectionString: args.connectionString, rootPath: args.rootPath });
  let overlaps = 0;
  for (let i = 0; i < args.iterations; i++) {
    const lock = await locks.acquire(args.name, { timeoutMs: 60_000 });
    let fd: number | undefined;
    try {
      fd = openSync(args.marker, 'wx');
    } catch {
      overlaps++;
    }
    appendFileSync(args.log, `${lock.fencingToken}\n`);
    const value = Number(readFileSync(args.counter, 'utf8'));
    await sleep(1);
    writeFileSync(args.counter, String(value + 1));
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(args.marker);
    }
    await lock.release();
  }
  await locks.close();
  process.stdout.write(JSON.stringify({ overlaps }));
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
