// A separate process contending for one lock: proves mutual exclusion across processes.
// Each critical section is a `markedSection`: an exclusive marker file and a slow
// read-modify-write of a shared counter file.
import { appendFileSync } from 'node:fs';

import { connectFromArgs, workerArgs, type ConnectArgs } from './connect-from-args.js';
import { markedSection } from './marked-section';

interface Args extends ConnectArgs {
  name: string;
  iterations: number;
  marker: string;
  counter: string;
  /** Fencing tokens appended in grant order, one per line. */
  log: string;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const locks = await connectFromArgs(args);
  let overlaps = 0;
  for (let i = 0; i < args.iterations; i++) {
    const lock = await locks.acquire(args.name, { timeoutMs: 60_000 });
    if (await markedSection(args.marker, args.counter, () => appendFileSync(args.log, `${lock.fencingToken}\n`)))
      overlaps++;
    await lock.release();
  }
  await locks.close();
  process.stdout.write(JSON.stringify({ overlaps }));
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
