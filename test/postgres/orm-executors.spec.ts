import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import createKnex, { type Knex } from 'knex';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Pool } from 'pg';
import { DataSource, type QueryRunner } from 'typeorm';
import ts from 'typescript';

import {
  FenceStoreError,
  InvalidOptionError,
  StaleFencingTokenError,
  type LockHandle,
  type ZkLockBackend,
} from '../../lib/index';
import { knexExecutor, kyselyExecutor, PgFence, typeormExecutor, type FenceExecutor } from '../../lib/postgres/index';
import { LockFixture } from '../support/lock-fixture';
import { filesLoadedByEntry } from '../support/main-entry-loads';
import { PgFixture, pgUrl } from '../support/postgres/pg-test-env';
import { waitUntil } from '../support/wait-until';

const repo = resolve(__dirname, '../..');

/** One transaction of an ORM, as a test drives it. */
interface OrmTransaction {
  /** The adapter's executor on this transaction. */
  readonly executor: FenceExecutor;
  /** The user's own write, through the ORM: one seat of show 1 taken. */
  takeSeat(): Promise<unknown>;
}

/** An ORM's way into a transaction, and what its adapter must refuse. */
interface Orm {
  /** Runs `work` in a transaction of the ORM: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: OrmTransaction) => Promise<T>): Promise<T>;
  /** Objects of this ORM that are no running transaction, each with what it is. */
  notTransactions(): Promise<Array<[string, unknown]>>;
  /** The adapter under test. */
  readonly adapter: (value: never) => FenceExecutor;
  close(): Promise<void>;
}

/**
 * Each ORM adapter against the real PostgreSQL, inside the ORM's own transactions: the
 * fenced write commits with the token stored, a stale token rolls the ORM's transaction
 * back (its write gone), two transactions on one resource wait on the fence's row lock,
 * and what is not a running transaction is refused before anything is sent.
 */
describe('ORM executors: PgFence.check inside TypeORM, Knex and Kysely transactions', () => {
  let fx: LockFixture;
  let pg: PgFixture;
  let locks: ZkLockBackend;
  let pool: Pool;
  let fence: PgFence<Pool>;
  let table: string;
  let seatsTable: string;
  /** Connection options that make the suite's schema the default one, as an application's would be. */
  let searchPath: string;
  const orms = new Map<string, Orm>();

  beforeAll(async () => {
    fx = await LockFixture.create('orm-executors');
    pg = await PgFixture.create('orm_executors');
    locks = await fx.backend();
    pool = pg.pool();
    table = pg.table('fence');
    seatsTable = pg.table('shows');
    searchPath = `-c search_path=${pg.schema}`;
    fence = new PgFence(pool, { table });
    await fence.install();
    await pool.query(`CREATE TABLE ${seatsTable} (id int PRIMARY KEY, remaining int NOT NULL)`);
    for (const [name, create] of Object.entries(ORMS)) orms.set(name, await create());
  });
  afterAll(async () => {
    for (const orm of orms.values()) await orm.close();
    await fx.cleanup();
    await pg.cleanup();
  });
  beforeEach(() =>
    pool.query(`INSERT INTO ${seatsTable} VALUES (1, 10), (42, 10) ON CONFLICT (id) DO UPDATE SET remaining = 10`),
  );

  const seats = async (id: number): Promise<number> =>
    (await pool.query<{ remaining: number }>(`SELECT remaining FROM ${seatsTable} WHERE id = $1`, [id])).rows[0]
      .remaining;
  const stored = async (resource: string): Promise<string | undefined> =>
    (await pg.rows(table)).find((row) => row.resource === resource)?.token;

  /** Two successive grants of `name`: the first's token is the lower. */
  async function twoGrants(name: string): Promise<[bigint, bigint]> {
    const tokens: bigint[] = [];
    for (let i = 0; i < 2; i++) {
      const lock = await locks.acquire(name);
      tokens.push(lock.fencingToken);
      await lock.release();
    }
    expect(tokens[1]).toBeGreaterThan(tokens[0]);
    return [tokens[0], tokens[1]];
  }

  const TAKE_SEAT = `UPDATE shows SET remaining = remaining - 1 WHERE id = 1`;

  const ORMS: Record<string, () => Promise<Orm>> = {
    'TypeORM EntityManager': async () => {
      const dataSource = await typeormSource();
      return {
        adapter: typeormExecutor as Orm['adapter'],
        transaction: (work) =>
          dataSource.transaction((manager) =>
            work({ executor: typeormExecutor(manager), takeSeat: () => manager.query(TAKE_SEAT) }),
          ),
        notTransactions: async () => {
          const ended = dataSource.createQueryRunner();
          await ended.connect();
          await ended.startTransaction();
          await ended.commitTransaction();
          await ended.release();
          return [
            ['dataSource.manager (no transaction)', dataSource.manager],
            ['the manager of a released runner', ended.manager],
          ];
        },
        close: () => dataSource.destroy(),
      };
    },
    'TypeORM QueryRunner': async () => {
      const dataSource = await typeormSource();
      return {
        adapter: typeormExecutor as Orm['adapter'],
        transaction: async (work) => {
          const runner = dataSource.createQueryRunner();
          await runner.connect();
          await runner.startTransaction();
          try {
            const result = await work({ executor: typeormExecutor(runner), takeSeat: () => runner.query(TAKE_SEAT) });
            await runner.commitTransaction();
            return result;
          } catch (error) {
            await runner.rollbackTransaction();
            throw error;
          } finally {
            await runner.release();
          }
        },
        notTransactions: async () => {
          const idle: QueryRunner = dataSource.createQueryRunner();
          await idle.connect();
          await idle.release();
          return [['a runner without startTransaction()', idle]];
        },
        close: () => dataSource.destroy(),
      };
    },
    Knex: async () => {
      const knex: Knex = createKnex({
        client: 'pg',
        connection: { connectionString: pgUrl(), options: searchPath },
        pool: { min: 0, max: 4 },
      });
      return {
        adapter: knexExecutor as Orm['adapter'],
        transaction: (work) =>
          knex.transaction((trx) => work({ executor: knexExecutor(trx), takeSeat: () => trx.raw(TAKE_SEAT) })),
        notTransactions: async () => {
          let committed: Knex.Transaction | undefined;
          await knex.transaction(async (trx) => void (committed = trx));
          return [
            ['the knex instance (no transaction)', knex],
            ['a committed transaction', committed],
          ];
        },
        close: () => knex.destroy(),
      };
    },
    Kysely: async () => {
      const db = kyselyDb();
      return {
        adapter: kyselyExecutor as Orm['adapter'],
        transaction: (work) =>
          db
            .transaction()
            .execute((trx) => work({ executor: kyselyExecutor(trx), takeSeat: () => sql.raw(TAKE_SEAT).execute(trx) })),
        notTransactions: async () => {
          const rolledBack = await db.startTransaction().execute();
          await rolledBack.rollback().execute();
          return [
            ['the Kysely instance (no transaction)', db],
            ['a rolled-back controlled transaction', rolledBack],
          ];
        },
        close: () => db.destroy(),
      };
    },
    'Kysely ControlledTransaction': async () => {
      const db = kyselyDb();
      return {
        adapter: kyselyExecutor as Orm['adapter'],
        transaction: async (work) => {
          const trx = await db.startTransaction().execute();
          try {
            const result = await work({
              executor: kyselyExecutor(trx),
              takeSeat: () => sql.raw(TAKE_SEAT).execute(trx),
            });
            await trx.commit().execute();
            return result;
          } catch (error) {
            await trx.rollback().execute();
            throw error;
          }
        },
        notTransactions: async () => {
          const committed = await db.startTransaction().execute();
          await committed.commit().execute();
          return [['a committed controlled transaction', committed]];
        },
        close: () => db.destroy(),
      };
    },
  };

  async function typeormSource(): Promise<DataSource> {
    return new DataSource({ type: 'postgres', url: pgUrl(), poolSize: 4, extra: { options: searchPath } }).initialize();
  }
  function kyselyDb<DB>(): Kysely<DB> {
    return new Kysely<DB>({ dialect: new PostgresDialect({ pool: pg.pool({ options: searchPath }) }) });
  }

  describe.each(Object.keys(ORMS))('%s', (name) => {
    const orm = (): Orm => orms.get(name)!;
    const resource = (what: string): string => `${name}/${what}`;

    it("commits the fenced write in the ORM's transaction, the token stored", async () => {
      const lock = await locks.acquire(resource('commits'));
      try {
        await orm().transaction(async (tx) => {
          await fence.check(tx.executor, lock.name, lock.fencingToken);
          await tx.takeSeat();
        });
      } finally {
        await lock.release();
      }
      expect(await seats(1)).toBe(9);
      expect(await stored(lock.name)).toBe(String(lock.fencingToken));
    });

    it("refuses a stale token: the ORM's transaction rolls back, its own write gone", async () => {
      const name = resource('stale');
      const [older, newer] = await twoGrants(name);
      await orm().transaction((tx) => fence.check(tx.executor, name, newer));
      const refused = await orm()
        .transaction(async (tx) => {
          await tx.takeSeat();
          await fence.check(tx.executor, name, older);
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StaleFencingTokenError);
      expect(refused).toMatchObject({ resource: name, token: older, highestSeen: newer });
      expect(await seats(1)).toBe(10);
      expect(await stored(name)).toBe(String(newer));
    });

    it('orders two transactions on one resource by the row lock: the lower token waits, then is refused', async () => {
      const name = resource('concurrent');
      const [older, newer] = await twoGrants(name);
      let commitFirst!: () => void;
      const held = new Promise<void>((resolve) => (commitFirst = resolve));
      let firstChecked!: () => void;
      const checked = new Promise<void>((resolve) => (firstChecked = resolve));
      const first = orm().transaction(async (tx) => {
        await fence.check(tx.executor, name, newer);
        firstChecked();
        await held;
      });
      await checked;
      let pid = 0;
      const second = orm()
        .transaction(async (tx) => {
          pid = Number((await tx.executor.query('SELECT pg_backend_pid() AS pid')).rows[0]['pid' as never]);
          await tx.takeSeat();
          await fence.check(tx.executor, name, older);
        })
        .then(
          () => 'stored',
          (error: unknown) => (error instanceof StaleFencingTokenError ? 'refused' : error),
        );
      // The server's own view: the second check waits for the first transaction's row lock.
      await waitUntil(
        async () =>
          pid !== 0 &&
          (await pg.admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid]))
            .rowCount === 1,
        'the second transaction to wait for the row lock',
      );
      commitFirst();
      await first;
      expect(await second).toBe('refused');
      expect(await seats(1)).toBe(10);
      expect(await stored(name)).toBe(String(newer));
    });

    it('refuses what is not a running transaction, naming what it expected; nothing sent', async () => {
      const before = await pg.rows(table);
      const cases: Array<[string, unknown]> = [
        ...(await orm().notTransactions()),
        ['undefined', undefined],
        ['a pg Pool', pool],
        ['a plain object', {}],
      ];
      for (const [what, value] of cases) {
        const refused = (() => {
          try {
            orm().adapter(value as never);
            return undefined;
          } catch (error) {
            return error;
          }
        })();
        expect([what, refused]).toEqual([what, expect.any(InvalidOptionError)]);
        expect((refused as Error).message).toMatch(/transaction/);
      }
      expect(await pg.rows(table)).toEqual(before);
    });

    it('refuses a statement once the transaction it was made in has ended; nothing stored', async () => {
      const executor = await orm().transaction(async (tx) => tx.executor);
      const refused = await fence.check(executor, resource('after'), 1n).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(FenceStoreError);
      // The adapter's own refusal, before the ORM's; a plain Kysely Transaction cannot tell
      // that its callback returned, and Kysely refuses the statement itself.
      expect((refused as Error).cause).toBeInstanceOf(name === 'Kysely' ? Error : InvalidOptionError);
      expect(await stored(resource('after'))).toBeUndefined();
    });
  });

  it('refuses a TypeORM QueryRunner whose transaction committed, though not released: the check would commit at once', async () => {
    const dataSource = await typeormSource();
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      const executor = typeormExecutor(runner);
      await runner.commitTransaction();
      const refused = await fence.check(executor, 'typeorm/committed', 1n).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(FenceStoreError);
      expect((refused as Error).cause).toBeInstanceOf(InvalidOptionError);
      expect(() => typeormExecutor(runner.manager)).toThrow(InvalidOptionError);
    } finally {
      await runner.release();
      await dataSource.destroy();
    }
    expect(await stored('typeorm/committed')).toBeUndefined();
  });

  describe("Knex's placeholders", () => {
    it('binds $n as ?, leaving literals, quoted names and comments alone, and keeps a jsonb ? operator', async () => {
      const knex = createKnex({ client: 'pg', connection: pgUrl(), pool: { min: 0, max: 1 } });
      try {
        const row = await knex.transaction(async (trx) => {
          const { rows } = await knexExecutor(trx).query(
            `SELECT $2::text AS "$1", '$1 ?' AS literal, $$ $1 $$ AS dollar, '{"k":1}'::jsonb ? 'k' AS has, $1::int + $1::int AS twice -- $1 ?\n`,
            [20, 'second'],
          );
          return rows[0];
        });
        expect(row).toEqual({ $1: 'second', literal: '$1 ?', dollar: ' $1 ', has: true, twice: 40 });
      } finally {
        await knex.destroy();
      }
    });
  });

  describe('the snippets of docs/fencing.md', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orm-snippets-'));
    symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
    const doc = readFileSync(join(repo, 'docs/fencing.md'), 'utf8');
    /** The first ts block under `#### heading`, its package imports pointed at this checkout. */
    const snippet = (heading: string): string => {
      const section = doc.slice(doc.indexOf(`#### ${heading}\n`));
      const match = /```ts\n([\s\S]*?)```/.exec(section);
      if (!match) throw new Error(`docs/fencing.md has no ts snippet under "#### ${heading}"`);
      return match[1]
        .replace(`from 'nestjs-zk-lock/postgres'`, `from '${join(repo, 'lib/postgres/index')}'`)
        .replace(`from 'nestjs-zk-lock'`, `from '${join(repo, 'lib/index')}'`);
    };
    const files = ['TypeORM', 'Knex', 'Kysely'].map((heading) => {
      const file = join(dir, `${heading.toLowerCase()}.ts`);
      writeFileSync(file, snippet(heading));
      return file;
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('type-check as they are, with TypeScript strict', () => {
      const program = ts.createProgram(files, {
        strict: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        experimentalDecorators: true, // the package's Nest glue, which the snippets' imports reach
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diagnostics).toEqual([]);
    });

    type TakeSeat = (orm: unknown, fence: PgFence, lock: LockHandle) => Promise<void>;
    const connections: Record<string, () => Promise<[unknown, () => Promise<void>]>> = {
      TypeORM: async () => {
        const dataSource = await typeormSource();
        return [dataSource, () => dataSource.destroy()];
      },
      Knex: async () => {
        const knex = createKnex({ client: 'pg', connection: { connectionString: pgUrl(), options: searchPath } });
        return [knex, () => knex.destroy()];
      },
      Kysely: async () => {
        const db = kyselyDb();
        return [db, () => db.destroy()];
      },
    };

    it.each(['TypeORM', 'Knex', 'Kysely'])(
      '%s: takes a seat under the fence, then a stale token rolls it back',
      async (heading) => {
        const { takeSeat } = require(files[['TypeORM', 'Knex', 'Kysely'].indexOf(heading)]) as { takeSeat: TakeSeat };
        const [connection, close] = await connections[heading]();
        const name = `snippet/${heading}`;
        try {
          const older = await locks.acquire(name);
          await older.release();
          const newer = await locks.acquire(name);
          try {
            await takeSeat(connection, fence as PgFence, newer);
          } finally {
            await newer.release();
          }
          expect(await seats(42)).toBe(9);
          expect(await stored(name)).toBe(String(newer.fencingToken));
          await expect(takeSeat(connection, fence as PgFence, older)).rejects.toBeInstanceOf(StaleFencingTokenError);
          expect(await seats(42)).toBe(9);
          expect(await stored(name)).toBe(String(newer.fencingToken));
        } finally {
          await close();
        }
      },
    );
  });

  it('nestjs-zk-lock/postgres loads nothing of TypeORM, Knex or Kysely', () => {
    expect(filesLoadedByEntry('./lib/postgres/index.ts', /[\\/]node_modules[\\/](typeorm|knex|kysely)[\\/]/)).toEqual(
      [],
    );
  });
});
