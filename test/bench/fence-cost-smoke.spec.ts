import { Pool } from 'pg';

import {
  FENCE_VARIANTS,
  fenceMarkdown,
  measureFenceCost,
  QUICK_FENCE_COUNTS,
  type FenceCostResults,
} from '../../bench/fence/fence-cost';
import { pgUrl } from '../support/postgres/pg-test-env';

/**
 * The benchmark's fence pass in its --quick counts, against the test PostgreSQL, so that it
 * cannot rot: shapes and sane values, not speed.
 */
describe("benchmark's fence pass, --quick against the test PostgreSQL", () => {
  let results: FenceCostResults;
  const pool = new Pool({ connectionString: pgUrl(), max: 1 });

  beforeAll(async () => {
    results = await measureFenceCost(pgUrl(), QUICK_FENCE_COUNTS, { external: true, quick: true });
  });
  afterAll(() => pool.end());

  it('ran every variant its count of transactions, and each one committed', () => {
    const { transactions, warmup } = QUICK_FENCE_COUNTS;
    expect(results.rows.map((r) => [r.variant, r.transactions])).toEqual(FENCE_VARIANTS.map((v) => [v, transactions]));
    expect(results.committed).toBe(FENCE_VARIANTS.length * (transactions + warmup));
    for (const row of results.rows) {
      expect(row.p50Us).toBeGreaterThan(0);
      expect(row.p99Us).toBeGreaterThanOrEqual(row.p50Us);
    }
    expect(results.rows[0]).toMatchObject({ variant: 'unfenced', ratioP50: 1, ratioP99: 1 });
  });

  it("fenced through PostgreSQL: the fence's table held the lock's token for both fenced variants, and the benchmark's tables are gone", async () => {
    expect(results.fencedTokens).toEqual({ check: expect.any(String), transaction: expect.any(String) });
    expect(results.fencedTokens.check).toBe(results.fencedTokens.transaction); // one lock's token
    const { rows } = await pool.query(
      `SELECT tablename FROM pg_tables WHERE tablename IN ('zk_lock_bench_fence_cost', 'zk_lock_bench_fence')`,
    );
    expect(rows).toEqual([]);
  });

  it('reports a row per variant with the conditions of the run', () => {
    const markdown = fenceMarkdown(results);
    expect(markdown).toMatch(/load average [\d.]+ before and [\d.]+ after/);
    for (const variant of FENCE_VARIANTS)
      expect(markdown).toMatch(new RegExp(`^\\| ${variant} \\| ${QUICK_FENCE_COUNTS.transactions} \\|`, 'm'));
  });
});
