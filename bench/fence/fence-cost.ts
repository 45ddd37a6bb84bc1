import { cpus, loadavg } from 'node:os';

import { Pool, type PoolClient } from 'pg';

import { InMemoryLockBackend, type LockHandle } from '../../lib/index.js';
import { PgFence } from '../../lib/postgres/index.js';
import { percentile, shuffled } from '../support/sample-stats.js';

/**
 * The fence's cost: one transaction (an UPDATE of one row) written three ways, on one
 * connection, side by side in slices of random order so they share the machine's moods:
 * unfenced (BEGIN; UPDATE; COMMIT), with `PgFence.check` before the UPDATE in the same
 * transaction, and through `PgFence.transaction` (which adds its lock checks and its own
 * BEGIN/COMMIT). The lock is an in-memory one: its token is what matters to PostgreSQL.
 */
export const FENCE_VARIANTS = ['unfenced', 'check', 'transaction'] as const;
export type FenceVariant = (typeof FENCE_VARIANTS)[number];

export interface FenceCostCounts {
  /** Measured transactions per variant, in `slices` turns. */
  readonly transactions: number;
  readonly slices: number;
  /** Unmeasured transactions per variant first. */
  readonly warmup: number;
}

export const FENCE_COUNTS: FenceCostCounts = { transactions: 6000, slices: 30, warmup: 500 };
export const QUICK_FENCE_COUNTS: FenceCostCounts = { transactions: 60, slices: 3, warmup: 10 };

export interface FenceVariantRow {
  readonly variant: FenceVariant;
  readonly transactions: number;
  readonly p50Us: number;
  readonly p99Us: number;
  /** p50 over the unfenced p50. */
  readonly ratioP50: number;
  readonly ratioP99: number;
}

export interface FenceCostResults {
  readonly schema: 1;
  readonly kind: 'fence';
  readonly meta: {
    readonly startedAt: string;
    readonly postgres: string;
    /** A server the benchmark started itself (fsync off), or one given by DATABASE_URL. */
    readonly external: boolean;
    readonly cpus: number;
    /** The 1-minute load average before and after the run. */
    readonly loadBefore: number;
    readonly loadAfter: number;
    readonly quick: boolean;
  };
  readonly counts: FenceCostCounts;
  readonly rows: FenceVariantRow[];
  /** The row every transaction incremented, read back: every measured and warm-up transaction committed. */
  readonly committed: number;
  /**
   * The tokens the fence's table held at the end, for the resource of each fenced variant
   * (`check` fences `<lock>:check`, `transaction` the lock's name): the lock's, when it checked.
   */
  readonly fencedTokens: { readonly check: string | null; readonly transaction: string | null };
}

const TABLE = 'zk_lock_bench_fence_cost';
const FENCE_TABLE = 'zk_lock_bench_fence';
const UPDATE = `UPDATE ${TABLE} SET n = n + 1 WHERE id = 1`;

export async function measureFenceCost(
  url: string,
  counts: FenceCostCounts,
  options: { external: boolean; quick: boolean },
): Promise<FenceCostResults> {
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg()[0];
  const pool = new Pool({ connectionString: url, max: 1 });
  const locks = new InMemoryLockBackend();
  try {
    const fence = new PgFence(pool, { table: FENCE_TABLE });
    await fence.install();
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await pool.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, n bigint NOT NULL)`);
    await pool.query(`INSERT INTO ${TABLE} VALUES (1, 0)`);
    const lock = await locks.acquire('bench-fence');
    const run = variants(pool, fence, lock);
    for (const variant of FENCE_VARIANTS) for (let i = 0; i < counts.warmup; i++) await run[variant]();
    const times: Record<FenceVariant, number[]> = { unfenced: [], check: [], transaction: [] };
    const perSlice = Math.ceil(counts.transactions / counts.slices);
    for (let slice = 0; slice < counts.slices; slice++)
      for (const variant of shuffled(FENCE_VARIANTS))
        for (let i = 0; i < perSlice && times[variant].length < counts.transactions; i++) {
          const start = process.hrtime.bigint();
          await run[variant]();
          times[variant].push(Number(process.hrtime.bigint() - start) / 1000);
        }
    await lock.release();
    const { rows } = await pool.query<{ n: string; version: string; check: string | null; transaction: string | null }>(
      `SELECT n::text AS n, current_setting('server_version') AS version,
         (SELECT token::text FROM ${FENCE_TABLE} WHERE resource = $1) AS check,
         (SELECT token::text FROM ${FENCE_TABLE} WHERE resource = $2) AS transaction FROM ${TABLE}`,
      [checkResource(lock), lock.name],
    );
    await pool.query(`DROP TABLE ${TABLE}`);
    await pool.query(`DROP TABLE ${FENCE_TABLE}`);
    return {
      schema: 1,
      kind: 'fence',
      meta: {
        startedAt,
        postgres: rows[0].version,
        external: options.external,
        cpus: cpus().length,
        loadBefore,
        loadAfter: loadavg()[0],
        quick: options.quick,
      },
      counts,
      rows: summarize(times),
      committed: Number(rows[0].n),
      fencedTokens: { check: rows[0].check, transaction: rows[0].transaction },
    };
  } finally {
    await Promise.all([pool.end(), locks.close()]);
  }
}

function variants(pool: Pool, fence: PgFence<Pool>, lock: LockHandle): Record<FenceVariant, () => Promise<unknown>> {
  const inTransaction = async (fenced: boolean): Promise<void> => {
    const client: PoolClient = await pool.connect();
    try {
      await client.query('BEGIN');
      if (fenced) await fence.check(client, checkResource(lock), lock.fencingToken);
      await client.query(UPDATE);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  return {
    unfenced: () => inTransaction(false),
    check: () => inTransaction(true),
    transaction: () => fence.transaction(lock, (client) => client.query(UPDATE)),
  };
}

/** The `check` variant's resource: apart from the `transaction` variant's, so that each one's write shows. */
const checkResource = (lock: LockHandle): string => `${lock.name}:check`;

function summarize(times: Record<FenceVariant, number[]>): FenceVariantRow[] {
  const base = { p50: percentile(times.unfenced, 50), p99: percentile(times.unfenced, 99) };
  return FENCE_VARIANTS.map((variant) => {
    const p50Us = percentile(times[variant], 50);
    const p99Us = percentile(times[variant], 99);
    return {
      variant,
      transactions: times[variant].length,
      p50Us,
      p99Us,
      ratioP50: p50Us / base.p50,
      ratioP99: p99Us / base.p99,
    };
  });
}

/** The report: a table, and the conditions it was measured in. */
export function fenceMarkdown(results: FenceCostResults): string {
  const { meta, counts } = results;
  const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const us = (value: number): string => value.toFixed(0);
  return [
    '# The fence’s cost in PostgreSQL',
    '',
    `Generated by \`npm run bench\` on ${meta.startedAt}; do not edit by hand.`,
    '',
    `One transaction (an UPDATE of one row) on one connection, ${counts.transactions} times each way after ${counts.warmup} unmeasured, in ${counts.slices} slices of random order: unfenced (\`BEGIN; UPDATE; COMMIT\`), with \`PgFence.check\` before the UPDATE, and through \`PgFence.transaction\`. PostgreSQL ${meta.postgres} on loopback${meta.external ? ' (DATABASE_URL)' : ', a throwaway server with fsync off'}; ${meta.cpus} CPUs, load average ${meta.loadBefore.toFixed(1)} before and ${meta.loadAfter.toFixed(1)} after. Per-transaction latency as the client sees it, in µs.`,
    '',
    row(['variant', 'transactions', 'p50 µs', 'p99 µs', 'p50 ÷ unfenced', 'p99 ÷ unfenced']),
    row(['---', '---:', '---:', '---:', '---:', '---:']),
    ...results.rows.map((r) =>
      row([r.variant, String(r.transactions), us(r.p50Us), us(r.p99Us), r.ratioP50.toFixed(2), r.ratioP99.toFixed(2)]),
    ),
    '',
  ].join('\n');
}
