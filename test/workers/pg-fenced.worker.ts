// A lock holder in its own process that writes to PostgreSQL through PgFence
// (test/postgres/pg-fence-faults.spec.ts). Two modes:
//
// - `pause`: acquires `name`, checks it is held (assertHeld), reports `checked`, and then
//   writes only once it gets SIGUSR2: the test stops it (SIGSTOP) in that gap, as a GC
//   pause would, lets another holder write, and resumes it. Its write is BEGIN, the fence's
//   check, the UPDATE of `data`, COMMIT: it does not look at the lock again, as a paused
//   process cannot. Reports `wrote`, or `refused` with the highest token the store had seen.
// - `increment`: `count` times, acquires `name` and adds one to `counter` by a read and a
//   write in a fenced transaction; reports `done` with how many writes were stored or
//   refused, and their tokens.
//
// One JSON line per event on stdout.
import { Pool } from 'pg';

import { StaleFencingTokenError, ZkLockBackend } from '../../lib/index.js';
import { PgFence } from '../../lib/postgres/index.js';

interface Args {
  mode: 'pause' | 'increment';
  connectionString: string;
  rootPath: string;
  name: string;
  sessionTimeoutMs: number;
  pgUrl: string;
  /** The fence's table, and the suite's table of data (`data(id, value)` or `counter(id, n)`). */
  fenceTable: string;
  dataTable: string;
  count?: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const report = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};

async function pause(locks: ZkLockBackend, pool: Pool, fence: PgFence<Pool>): Promise<void> {
  const resumed = new Promise((resolve) => process.once('SIGUSR2', resolve));
  const lock = await locks.acquire(args.name, { timeoutMs: 30_000 });
  lock.assertHeld();
  report('checked', { token: String(lock.fencingToken) });
  await resumed;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fence.check(client, args.name, lock.fencingToken);
    await client.query(`UPDATE ${args.dataTable} SET value = 'paused holder' WHERE id = $1`, [args.name]);
    await client.query('COMMIT');
    report('wrote');
  } catch (error) {
    await client.query('ROLLBACK');
    if (!(error instanceof StaleFencingTokenError)) throw error;
    report('refused', { token: String(error.token), highestSeen: String(error.highestSeen) });
  } finally {
    client.release();
    await lock.release().catch(() => undefined); // its session is gone: nothing to release
  }
}

async function increment(locks: ZkLockBackend, fence: PgFence<Pool>): Promise<void> {
  const tokens: string[] = [];
  let refused = 0;
  for (let i = 0; i < args.count!; i++) {
    const lock = await locks.acquire(args.name, { timeoutMs: 60_000 });
    try {
      await fence.transaction(lock, async (client) => {
        const { rows } = await client.query<{ n: number }>(`SELECT n FROM ${args.dataTable} WHERE id = $1`, [
          args.name,
        ]);
        await client.query(`UPDATE ${args.dataTable} SET n = $2 WHERE id = $1`, [args.name, rows[0].n + 1]);
      });
      tokens.push(String(lock.fencingToken));
    } catch (error) {
      if (!(error instanceof StaleFencingTokenError)) throw error;
      refused++;
    } finally {
      await lock.release();
    }
  }
  report('done', { stored: tokens.length, refused, tokens });
}

async function main(): Promise<void> {
  const locks = await ZkLockBackend.connect({
    connectionString: args.connectionString,
    rootPath: args.rootPath,
    sessionTimeoutMs: args.sessionTimeoutMs,
    emptyDirectoryGraceMs: 0,
  });
  const pool = new Pool({ connectionString: args.pgUrl, max: 2 });
  const fence = new PgFence(pool, { table: args.fenceTable });
  try {
    if (args.mode === 'pause') await pause(locks, pool, fence);
    else await increment(locks, fence);
  } finally {
    await Promise.all([locks.close(), pool.end()]);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
