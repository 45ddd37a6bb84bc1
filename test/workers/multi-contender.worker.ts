// A separate process taking several locks at once, again and again, listing the names in
// the order it is given (the test gives two processes opposite orders): proves that
// acquireAll neither deadlocks nor lets two holders in across processes. Each critical
// section is a `markedSection` (an exclusive marker file, a slow read-modify-write of a
// shared counter file) that appends each lock's fencing token to that lock's token file. With `holdFirst`, each round first holds
// one of the names through withLock and asks the multi-lock inside it, as a call chain that
// already holds a lock does: joined when the other names sort after it, refused at once
// (LockOrderError) otherwise; never a deadlock with the other process.
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockOrderError, ReentrantLocker, ZkLockBackend, type MultiLockHandle } from '../../lib/index.js';
import { markedSection } from './marked-section';

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
  /** Each round, hold one of `names` (at random) through withLock and ask the multi-lock inside it. */
  holdFirst?: boolean;
}

/** What a worker did: overlaps seen, and with `holdFirst`, each round's outcome by the name held first. */
interface Outcome {
  overlaps: number;
  joined: Record<string, number>;
  refused: Record<string, number>;
  /** Refusals made while the other process waited for the name held: where a deadlock could have closed. */
  refusedWithRivalQueued: number;
}

/** Starts together with the other workers, so that they contend from the first round. */
async function barrier(args: Args): Promise<void> {
  writeFileSync(join(args.ready, args.id), '');
  while (readdirSync(args.ready).length < args.parties) await sleep(5);
}

/** The critical section: claims the marker, records the tokens and the holder, bumps the counter. */
async function section(args: Args, group: MultiLockHandle, outcome: Outcome): Promise<void> {
  const overlapped = await markedSection(args.marker, args.counter, () => {
    for (const handle of group.handles) appendFileSync(args.tokens[handle.name], `${handle.fencingToken}\n`);
    appendFileSync(args.log, `${args.id}\n`);
  });
  if (overlapped) outcome.overlaps++;
  group.assertHeld();
}

/** One round holding a random name first: the multi-lock inside is joined or refused, never left waiting. */
async function holdingFirst(
  args: Args,
  locks: ZkLockBackend,
  locker: ReentrantLocker,
  outcome: Outcome,
): Promise<void> {
  const first = args.names[Math.floor(Math.random() * args.names.length)];
  const { timeoutMs } = args;
  await locker.withLock(
    first,
    async () => {
      await sleep(Math.floor(Math.random() * 3)); // lets the other process queue behind this hold, or not
      try {
        await locker.withLocks(args.names, (group) => section(args, group, outcome), { timeoutMs });
        outcome.joined[first] = (outcome.joined[first] ?? 0) + 1;
      } catch (error) {
        if (!(error instanceof LockOrderError)) throw error;
        outcome.refused[first] = (outcome.refused[first] ?? 0) + 1;
        if ((await locks.contenders(first)).length > 1) outcome.refusedWithRivalQueued++;
      }
    },
    { timeoutMs },
  );
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as Args;
  const locks = await ZkLockBackend.connect({ connectionString: args.connectionString, rootPath: args.rootPath });
  const locker = new ReentrantLocker(locks, args.timeoutMs);
  await barrier(args);
  const outcome: Outcome = { overlaps: 0, joined: {}, refused: {}, refusedWithRivalQueued: 0 };
  for (let i = 0; i < args.iterations; i++) {
    if (args.holdFirst) {
      await holdingFirst(args, locks, locker, outcome);
      continue;
    }
    const group = await locks.acquireAll(args.names, { timeoutMs: args.timeoutMs });
    await section(args, group, outcome);
    await group.release();
  }
  await locks.close();
  process.stdout.write(JSON.stringify(outcome));
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
