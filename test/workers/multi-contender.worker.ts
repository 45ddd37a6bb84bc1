// A separate process taking several locks at once, again and again, listing the names in
// the order it is given (the test gives two processes opposite orders): proves that
// acquireAll neither deadlocks nor lets two holders in across processes. Each critical
// section claims an exclusive marker file (creation fails with EEXIST if another holder
// is inside), does a slow read-modify-write of a shared counter file, and appends each
// lock's fencing token to that lock's token file.
import { appendFileSync, closeSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ZkLockBackend } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  /** The names, in the order this process lists them. */
  names: string[];
  iterations: number;
  /** A deadlock shows up as a LockTimeoutError after this long, instead of a hang. */
  timeoutMs: number;
  marker: string;
  counter: string;
  /** One file per name, by name: fencing tokens appended in grant order. */
  tokens: Record<string, string>;
  /** Who held, one line per critical section, in order. */
  log: string;
  /** This worker's id in the log. */
  id: string;
  /** A directory where each worker says it is ready; all start once `parties` have. */
  ready: string;
  parties: number;
}

/** Starts together with the other workers, so that they contend from the first round. */
async function barrier(args: Args): Promise<void> {
  writeFileSync(join(args.ready, args.id), '');
  while (readdirSync(args.ready).length < args.parties) await sleep(5);
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as Args;
  const locks = await ZkLockBackend.connect({ connectionString: args.connectionString, rootPath: args.rootPath });
  await barrier(args);
  let overlaps = 0;
  for (let i = 0; i < args.iterations; i++) {
    const group = await locks.acquireAll(args.names, { timeoutMs: args.timeoutMs });
    let fd: number | undefined;
    try {
      fd = openSync(args.marker, 'wx');
    } catch {
      overlaps++;
    }
    for (const handle of group.handles) appendFileSync(args.tokens[handle.name], `${handle.fencingToken}\n`);
    appendFileSync(args.log, `${args.id}\n`);
    const value = Number(readFileSync(args.counter, 'utf8'));
    await sleep(1);
    writeFileSync(args.counter, String(value + 1));
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(args.marker);
    }
    group.assertHeld();
    await group.release();
  }
  await locks.close();
  process.stdout.write(JSON.stringify({ overlaps }));
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
