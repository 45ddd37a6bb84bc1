import { randomBytes } from 'node:crypto';

import { Pool, type PoolConfig } from 'pg';

/** The server the test run uses: PG_TEST_URL, set by the global setup (its own throwaway server) or by the user. */
export function pgUrl(): string {
  const value = process.env.PG_TEST_URL;
  if (!value)
    throw new Error('PG_TEST_URL is not set: run the tests through jest (its global setup starts PostgreSQL).');
  return value;
}

/**
 * One suite's schema on the test server, so suites never see each other's tables, and
 * the pools it opened: `cleanup()` drops the schema and ends them all.
 */
export class PgFixture {
  private readonly pools: Pool[] = [];
  readonly admin: Pool;

  private constructor(readonly schema: string) {
    this.admin = this.pool();
  }

  static async create(suite: string): Promise<PgFixture> {
    const fixture = new PgFixture(`test_${suite.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`);
    await fixture.admin.query(`CREATE SCHEMA ${fixture.schema}`);
    return fixture;
  }

  /** A table name in this suite's schema. */
  table(name: string): string {
    return `${this.schema}.${name}`;
  }

  /** A new pool to the test server (ended by `cleanup`). */
  pool(config: PoolConfig = {}): Pool {
    const pool = new Pool({ connectionString: pgUrl(), max: 4, ...config });
    pool.on('error', () => undefined); // a connection the server closed (a cancelled backend): the pool drops it
    this.pools.push(pool);
    return pool;
  }

  /** Rows of `table` (resource, token as string), in resource order: the server's own state. */
  async rows(table: string): Promise<Array<{ resource: string; token: string }>> {
    const { rows } = await this.admin.query<{ resource: string; token: string }>(
      `SELECT resource, token::text AS token FROM ${table} ORDER BY resource`,
    );
    return rows;
  }

  async cleanup(): Promise<void> {
    await this.admin.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
    await Promise.all(this.pools.filter((pool) => !pool.ended).map((pool) => pool.end()));
  }
}
