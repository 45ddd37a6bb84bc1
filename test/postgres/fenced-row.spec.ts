import type { Pool } from 'pg';

import { InvalidOptionError, StaleFencingTokenError, type ZkLockBackend } from '../../lib/index';
import { assertFencedUpdate } from '../../lib/postgres/index';
import { LockFixture } from '../support/lock-fixture';
import { PgFixture } from '../support/postgres/pg-test-env';

/**
 * The row variant, for teams that keep the token on their own rows: the UPDATE guards
 * itself (`… AND fence_token <= $t`), and `assertFencedUpdate` tells a row refused for its
 * token (`StaleFencingTokenError`, as PgFence.check) from a row that is not there.
 */
describe('the row variant: a fence_token column on your own table', () => {
  let fx: LockFixture;
  let pg: PgFixture;
  let locks: ZkLockBackend;
  let pool: Pool;
  let shows: string;

  beforeAll(async () => {
    fx = await LockFixture.create('fenced-row');
    pg = await PgFixture.create('fenced_row');
    locks = await fx.backend();
    pool = pg.pool();
    shows = pg.table('shows');
    await pool.query(
      `CREATE TABLE ${shows} (id int PRIMARY KEY, remaining int NOT NULL, fence_token bigint NOT NULL DEFAULT 0)`,
    );
    await pool.query(`INSERT INTO ${shows} (id, remaining) VALUES (42, 10)`);
  });
  afterAll(async () => {
    await fx.cleanup();
    await pg.cleanup();
  });

  /** The documented example: take a seat of show `id` under `token`, in a transaction. */
  async function takeSeat(id: number, token: bigint): Promise<boolean> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await client.query(
        `UPDATE ${shows} SET remaining = remaining - 1, fence_token = $2 WHERE id = $1 AND fence_token <= $2`,
        [id, token],
      );
      const updated = await assertFencedUpdate(client, result, { table: shows, key: { id }, token });
      await client.query('COMMIT');
      return updated;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  const show = async (id: number) =>
    (await pool.query(`SELECT remaining, fence_token::text AS token FROM ${shows} WHERE id = $1`, [id])).rows[0];

  it('writes under the newer token, refuses the older one after it, and keeps the row', async () => {
    const older = await locks.acquire('shows/42');
    await older.release();
    const newer = await locks.acquire('shows/42');
    await newer.release();

    expect(await takeSeat(42, newer.fencingToken)).toBe(true);
    expect(await show(42)).toEqual({ remaining: 9, token: String(newer.fencingToken) });
    const refused = await takeSeat(42, older.fencingToken).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StaleFencingTokenError);
    expect(refused).toMatchObject({ token: older.fencingToken, highestSeen: newer.fencingToken });
    expect((refused as StaleFencingTokenError).resource).toBe(`${shows} {"id":42}`);
    expect(await show(42)).toEqual({ remaining: 9, token: String(newer.fencingToken) });
  });

  it('a missing row is not a stale token: false, nothing written', async () => {
    const lock = await locks.acquire('shows/7');
    await lock.release();
    expect(await takeSeat(7, lock.fencingToken)).toBe(false);
    expect(await show(7)).toBeUndefined();
  });

  it('refuses bad input before sending anything', async () => {
    const result = { rowCount: 0 };
    const cases: Array<[object, string]> = [
      [{ table: 'x; DROP TABLE y', key: { id: 1 }, token: 1n }, 'table'],
      [{ table: shows, key: {}, token: 1n }, 'key'],
      [{ table: shows, key: { 'id = 1 OR true': 1 }, token: 1n }, 'key.id = 1 OR true'],
      [{ table: shows, key: { id: 1 }, token: 1 }, 'token'],
      [{ table: shows, key: { id: 1 }, token: 1n, column: 'a b' }, 'column'],
    ];
    const executor = { query: jest.fn() };
    for (const [options, option] of cases)
      await expect(assertFencedUpdate(executor, result, options as never)).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        option,
      });
    await expect(
      assertFencedUpdate(executor, {} as never, { table: shows, key: { id: 1 }, token: 1n }),
    ).rejects.toBeInstanceOf(InvalidOptionError);
    expect(executor.query).not.toHaveBeenCalled();
  });
});
