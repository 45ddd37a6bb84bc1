import type { Pool } from 'pg';

import {
  FenceStoreError,
  InvalidOptionError,
  LeaderElection,
  LockLostError,
  StaleFencingTokenError,
  type ZkLockBackend,
} from '../../lib/index';
import { PgFence } from '../../lib/postgres/index';
import { LockFixture } from '../support/lock-fixture';
import { filesLoadedByMainEntry } from '../support/main-entry-loads';
import { PgFixture } from '../support/postgres/pg-test-env';
import { waitFor } from '../support/wait-for';
import { waitUntil } from '../support/wait-until';
import { recordingPool } from './recording-pool';

/**
 * PgFence against a real PostgreSQL and real ZooKeeper tokens: the check refuses a lower
 * token whatever the order of arrival, orders concurrent writers with its row lock, and a
 * fenced transaction commits only under a lock still held. Asserted on the table's rows.
 */
describe('PgFence', () => {
  let fx: LockFixture;
  let pg: PgFixture;
  let locks: ZkLockBackend;
  let pool: Pool;
  let fence: PgFence<Pool>;
  let table: string;

  beforeAll(async () => {
    fx = await LockFixture.create('pg-fence');
    pg = await PgFixture.create('pg_fence');
    locks = await fx.backend();
    pool = pg.pool();
    table = pg.table('fence');
    fence = new PgFence(pool, { table });
    await fence.install();
    await pool.query(`CREATE TABLE ${pg.table('seats')} (show int PRIMARY KEY, remaining int NOT NULL)`);
  });
  afterAll(async () => {
    await fx.cleanup();
    await pg.cleanup();
  });

  /** Two successive grants of `name`: the first's token is the lower. */
  async function twoGrants(name: string): Promise<[bigint, bigint]> {
    const first = await locks.acquire(name);
    await first.release();
    const second = await locks.acquire(name);
    await second.release();
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    return [first.fencingToken, second.fencingToken];
  }

  /** `fence.check` in a transaction of its own on a new connection, committed unless refused. */
  async function checkAlone(resource: string, token: bigint): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await fence.check(client, resource, token);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  const seats = async (show: number): Promise<number | undefined> =>
    (await pool.query<{ remaining: number }>(`SELECT remaining FROM ${pg.table('seats')} WHERE show = $1`, [show]))
      .rows[0]?.remaining;

  describe('install() and schema()', () => {
    it('creates the table: resource text key, token bigint, updated_at', async () => {
      const { rows } = await pool.query(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'fence' ORDER BY ordinal_position`,
        [pg.schema],
      );
      expect(rows).toEqual([
        { column_name: 'resource', data_type: 'text' },
        { column_name: 'token', data_type: 'bigint' },
        { column_name: 'updated_at', data_type: 'timestamp with time zone' },
      ]);
    });

    it('runs twice, and at once from several pools, leaving one table', async () => {
      const fresh = pg.table('fence_many');
      const fences = Array.from({ length: 6 }, () => new PgFence(pg.pool({ max: 1 }), { table: fresh }));
      await Promise.all(fences.map((each) => each.install()));
      await fences[0].install();
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'fence_many'`,
        [pg.schema],
      );
      expect(rows).toEqual([{ n: 1 }]);
    });

    it('schema() is the very statement install() runs', async () => {
      const recorded = recordingPool(pg.pool());
      const other = pg.table('fence_schema');
      await new PgFence(recorded.pool, { table: other }).install();
      expect(recorded.statements).toContain(PgFence.schema(other));
      expect(recorded.statements.filter((sql) => /CREATE/.test(sql))).toEqual([PgFence.schema(other)]);
      expect(PgFence.schema()).toMatch(/^CREATE TABLE IF NOT EXISTS zk_lock_fence \(/);
    });
  });

  describe('check()', () => {
    it('refuses the lower token when it comes after the higher one; the row keeps the higher', async () => {
      const [older, newer] = await twoGrants('late');
      await checkAlone('late', newer);
      const refused = await checkAlone('late', older).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StaleFencingTokenError);
      expect(refused).toMatchObject({
        code: 'STALE_FENCING_TOKEN',
        resource: 'late',
        token: older,
        highestSeen: newer,
      });
      expect(await pg.rows(table)).toContainEqual({ resource: 'late', token: String(newer) });
    });

    it('takes the lower token first, then the higher one (and the same token again)', async () => {
      const [older, newer] = await twoGrants('early');
      await checkAlone('early', older);
      expect(await pg.rows(table)).toContainEqual({ resource: 'early', token: String(older) });
      await checkAlone('early', newer);
      await checkAlone('early', newer);
      expect(await pg.rows(table)).toContainEqual({ resource: 'early', token: String(newer) });
    });

    it.each([
      ['the higher token holds the row: the lower one waits, then is refused', 'newer', 'refused'],
      ['the lower token holds the row: the higher one waits, then is stored', 'older', 'stored'],
    ] as const)('orders concurrent writers of one resource by its row lock: %s', async (_, first, outcome) => {
      const name = `concurrent-${first}`;
      const [older, newer] = await twoGrants(name);
      const [a, b] = [await pool.connect(), await pool.connect()];
      try {
        await a.query('BEGIN');
        await fence.check(a, name, first === 'newer' ? newer : older);
        await b.query('BEGIN');
        const second = fence.check(b, name, first === 'newer' ? older : newer).then(
          () => 'stored',
          (error: unknown) => (error instanceof StaleFencingTokenError ? 'refused' : error),
        );
        const { processID } = b as unknown as { processID: number };
        // The server's own view: the second statement waits for the first transaction's row lock.
        await waitFor(
          async () =>
            (
              await pg.admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [
                processID,
              ])
            ).rowCount === 1 || undefined,
          { what: 'the second writer to wait for the row lock' },
        );
        await a.query('COMMIT');
        expect(await second).toBe(outcome);
        await b.query(outcome === 'stored' ? 'COMMIT' : 'ROLLBACK');
        expect(await pg.rows(table)).toContainEqual({ resource: name, token: String(newer) });
      } finally {
        a.release();
        b.release();
      }
    });
  });

  describe('transaction()', () => {
    beforeEach(() =>
      pool.query(`INSERT INTO ${pg.table('seats')} VALUES (1, 10) ON CONFLICT (show) DO UPDATE SET remaining = 10`),
    );
    const takeSeat = (client: { query(text: string): Promise<unknown> }) =>
      client.query(`UPDATE ${pg.table('seats')} SET remaining = remaining - 1 WHERE show = 1`);

    it("commits the work with the lock's token stored under its name", async () => {
      const lock = await locks.acquire('seat/1');
      try {
        expect(await fence.transaction(lock, async (client) => (await takeSeat(client), 'done'))).toBe('done');
      } finally {
        await lock.release();
      }
      expect(await seats(1)).toBe(9);
      expect(await pg.rows(table)).toContainEqual({ resource: 'seat/1', token: String(lock.fencingToken) });
    });

    it('rolls back when the work throws: no seat taken, no token stored', async () => {
      const lock = await locks.acquire('seat/throws');
      const boom = new Error('boom');
      try {
        await expect(
          fence.transaction(lock, async (client) => {
            await takeSeat(client);
            throw boom;
          }),
        ).rejects.toBe(boom);
      } finally {
        await lock.release();
      }
      expect(await seats(1)).toBe(10);
      expect((await pg.rows(table)).map((row) => row.resource)).not.toContain('seat/throws');
    });

    it('refuses a released lock before BEGIN: nothing sent', async () => {
      const lock = await locks.acquire('seat/released');
      await lock.release();
      const recorded = recordingPool(pg.pool());
      let ran = false;
      await expect(new PgFence(recorded.pool, { table }).transaction(lock, () => (ran = true))).rejects.toBeInstanceOf(
        LockLostError,
      );
      expect([ran, recorded.statements]).toEqual([false, []]);
    });

    it('refuses a lock released while the work ran, before COMMIT: rolled back', async () => {
      const lock = await locks.acquire('seat/released-inside');
      await expect(
        fence.transaction(lock, async (client) => {
          await takeSeat(client);
          await lock.release();
        }),
      ).rejects.toBeInstanceOf(LockLostError);
      expect(await seats(1)).toBe(10);
      expect((await pg.rows(table)).map((row) => row.resource)).not.toContain('seat/released-inside');
    });

    it("cancels the running statement and rolls back when the lock's signal aborts mid-transaction", async () => {
      const lock = await locks.acquire('seat/aborted', { maxHoldMs: 1500 });
      let pid = 0;
      const outcome = await fence
        .transaction(lock, async (client) => {
          pid = (client as unknown as { processID: number }).processID;
          await takeSeat(client);
          await client.query('SELECT pg_sleep(600)');
        })
        .catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(LockLostError);
      expect(await seats(1)).toBe(10);
      expect((await pg.rows(table)).map((row) => row.resource)).not.toContain('seat/aborted');
      // The server runs nothing of it any more: the connection was closed, not pooled.
      await waitUntil(
        async () => (await pg.admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0,
        'the cancelled connection to close',
      );
    });

    it('fences each lock of a multi-lock under its own name, checked in name order', async () => {
      const group = await locks.acquireAll(['multi/b', 'multi/c', 'multi/a']);
      const recorded = recordingPool(pg.pool());
      try {
        await new PgFence(recorded.pool, { table }).transaction(group, takeSeat);
      } finally {
        await group.release();
      }
      const checked = recorded.values.filter((_, i) => recorded.statements[i].startsWith('INSERT'));
      expect(checked.map(([resource]) => resource)).toEqual(['multi/a', 'multi/b', 'multi/c']);
      const rows = (await pg.rows(table)).filter((row) => row.resource.startsWith('multi/'));
      expect(rows).toEqual(
        ['multi/a', 'multi/b', 'multi/c'].map((name) => ({
          resource: name,
          token: String(group.handles[group.names.indexOf(name)].fencingToken),
        })),
      );
      expect(await seats(1)).toBe(9);
    });

    it("fences a leader term under its group, with the term's token", async () => {
      const election = new LeaderElection(locks, 'reports');
      election.start();
      try {
        await waitUntil(() => election.isLeader, 'the candidate to lead');
        const term = election.term!;
        await fence.transaction(term, takeSeat);
        expect(await pg.rows(table)).toContainEqual({ resource: 'reports', token: String(term.fencingToken) });
      } finally {
        await election.stop();
      }
    });

    it('takes another resource name when given one', async () => {
      const lock = await locks.acquire('seat/named');
      try {
        await fence.transaction(lock, takeSeat, { resource: 'shows/1' });
      } finally {
        await lock.release();
      }
      expect(await pg.rows(table)).toContainEqual({ resource: 'shows/1', token: String(lock.fencingToken) });
    });

    it('fences a lease of 1 as a lock: its name is the resource', async () => {
      const lease = await locks.acquireLease('pool/one', { maxLeases: 1 });
      try {
        await fence.transaction(lease, takeSeat);
      } finally {
        await lease.release();
      }
      expect(await pg.rows(table)).toContainEqual({ resource: 'pool/one', token: String(lease.fencingToken) });
    });

    it.each([
      ['a lease of 2', () => locks.acquireLease('pool/leases', { maxLeases: 2 }), /a lease of 2/],
      ['a read lock', () => locks.acquire('shows/read', { mode: 'read' }), /not a read lock/],
      [
        'a multi-lock with a read lock',
        () => locks.acquireAll(['shows/multi-w', { name: 'shows/multi-r', mode: 'read' }]),
        /the read lock "shows\/multi-r"/,
      ],
    ])('refuses %s (its holders run at once and may share a token): nothing sent', async (_, take, message) => {
      const hold = await take();
      const recorded = recordingPool(pg.pool());
      try {
        const refused = await new PgFence(recorded.pool, { table })
          .transaction(hold, takeSeat)
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(InvalidOptionError);
        expect((refused as Error).message).toMatch(message);
      } finally {
        await hold.release();
      }
      expect(recorded.statements).toEqual([]);
    });
  });

  describe('bad input: a typed error, nothing written', () => {
    it('refuses a missing pool and a table name that is not a plain identifier', () => {
      for (const bad of [undefined, null, {}, { query() {} }])
        expect(() => new PgFence(bad as never)).toThrow(InvalidOptionError);
      for (const bad of ['', 'a.b.c', 'fence; DROP TABLE x', '"quoted"', '1abc', 'a-b', 'x'.repeat(64), 42])
        expect(() => new PgFence(pool, { table: bad as never })).toThrow(
          expect.objectContaining({ code: 'INVALID_OPTION', option: 'table' }),
        );
      expect(() => PgFence.schema('x; DROP TABLE y')).toThrow(InvalidOptionError);
      expect(new PgFence(pool, { table: 'Locks.Fence_1' }).table).toBe('Locks.Fence_1');
    });

    it('refuses an empty resource, a token out of range or not a bigint, a missing executor', async () => {
      const cases: Array<[unknown, unknown, unknown, string]> = [
        [pool, '', 1n, 'resource'],
        [pool, 42, 1n, 'resource'],
        [pool, 'r', -1n, 'token'],
        [pool, 'r', 2n ** 63n, 'token'],
        [pool, 'r', 5, 'token'],
        [pool, 'r', '5', 'token'],
        [undefined, 'r', 1n, 'executor'],
        [{}, 'r', 1n, 'executor'],
      ];
      for (const [executor, resource, token, option] of cases)
        await expect(fence.check(executor as never, resource as never, token as never)).rejects.toMatchObject({
          code: 'INVALID_OPTION',
          option,
        });
      expect((await pg.rows(table)).map((row) => row.resource)).not.toContain('r');
    });

    it('refuses what is not a held lock, and a resource option that cannot be used', async () => {
      const lock = await locks.acquire('bad/input');
      const group = await locks.acquireAll(['bad/g1', 'bad/g2']);
      try {
        for (const [holder, options, option] of [
          [undefined, {}, 'lock'],
          [{ name: 'x' }, {}, 'lock'],
          [lock, { resource: '' }, 'resource'],
          [group, { resource: 'r' }, 'resource'],
        ] as const)
          await expect(fence.transaction(holder as never, () => 1, options)).rejects.toMatchObject({
            code: 'INVALID_OPTION',
            option,
          });
      } finally {
        await Promise.all([lock.release(), group.release()]);
      }
      expect((await pg.rows(table)).map((row) => row.resource).filter((r) => r.startsWith('bad/'))).toEqual([]);
    });

    it('a closed executor: FenceStoreError naming the check, nothing written', async () => {
      const ended = pg.pool();
      await ended.end();
      const refused = await fence.check(ended, 'closed', 3n).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(FenceStoreError);
      expect((refused as Error).message).toMatch(/could not check the token of "closed"/);
      const lock = await locks.acquire('closed');
      try {
        await expect(new PgFence(ended, { table }).transaction(lock, () => 1)).rejects.toBeInstanceOf(FenceStoreError);
      } finally {
        await lock.release();
      }
      expect((await pg.rows(table)).map((row) => row.resource)).not.toContain('closed');
    });

    it('a missing table: FenceStoreError with its SQLSTATE', async () => {
      const refused = await new PgFence(pool, { table: pg.table('nowhere') })
        .check(pool, 'r', 1n)
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'FENCE_STORE', sqlState: '42P01' });
    });
  });

  it('the main entry loads nothing of it, nor of pg', () => {
    expect(filesLoadedByMainEntry(/[\\/]node_modules[\\/]pg[\\/]|[\\/]lib[\\/]postgres[\\/]/)).toEqual([]);
  });
});
