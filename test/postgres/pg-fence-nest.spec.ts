import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Pool, PoolClient } from 'pg';

import {
  InvalidOptionError,
  LeadershipService,
  LockService,
  NoFenceHoldError,
  WhenLeader,
  WithLock,
  ZkLockModule,
  InMemoryLockStore,
  createLockServiceMock,
} from '../../lib/index';
import { PgFence, PgFenceModule } from '../../lib/postgres/index';
import { startApp } from '../nest/nest-fixture';
import { PgFixture } from '../support/postgres/pg-test-env';
import { waitUntil } from '../support/wait-until';
import { recordingPool } from './recording-pool';

// PgFence in a Nest application: PgFenceModule provides it, and inside a @WithLock or
// @WhenLeader method one line (transactionForCall) opens a transaction fenced by what the
// call holds. Asserted on PostgreSQL's rows.

let pg: PgFixture;
let fenceTable: string;
let seats: string;

beforeAll(async () => {
  pg = await PgFixture.create('pg_fence_nest');
  fenceTable = pg.table('fence');
  seats = pg.table('seats');
  await pg.admin.query(`CREATE TABLE ${seats} (show text PRIMARY KEY, sold int NOT NULL DEFAULT 0)`);
});
afterAll(() => pg.cleanup());

/** What a sale sees: the token it held, per lock it held. */
interface Sale {
  readonly tokens: Record<string, string>;
}

@Injectable()
class Shows {
  constructor(
    private readonly fence: PgFence<Pool>,
    private readonly locks: LockService,
    private readonly leadership: LeadershipService,
  ) {}

  private sell(client: PoolClient, show: string): Promise<unknown> {
    return client.query(
      `INSERT INTO ${seats} (show, sold) VALUES ($1, 1) ON CONFLICT (show) DO UPDATE SET sold = ${seats}.sold + 1`,
      [show],
    );
  }

  @WithLock((show: string) => `show:${show}`)
  async sellOne(show: string): Promise<Sale> {
    await this.fence.transactionForCall((client) => this.sell(client, show));
    return { tokens: { [`show:${show}`]: String(this.locks.held(`show:${show}`)!.fencingToken) } };
  }

  // Nested: the outer lock and the inner one both fence the transaction, each its own resource.
  @WithLock(() => 'venue')
  async sellInVenue(show: string): Promise<Sale> {
    return this.locks.withLock(`show:${show}`, async (inner) => {
      await this.fence.transactionForCall((client) => this.sell(client, show));
      return {
        tokens: { venue: String(this.locks.held('venue')!.fencingToken), [`show:${show}`]: String(inner.fencingToken) },
      };
    });
  }

  @WithLock(() => 'venue')
  async sellNamed(show: string): Promise<void> {
    await this.locks.withLock(`show:${show}`, () =>
      this.fence.transactionForCall((client) => this.sell(client, show), { name: `show:${show}` }),
    );
  }

  @WithLock((show: string) => `show:${show}`, { mode: 'read' })
  async sellUnderRead(show: string): Promise<void> {
    await this.fence.transactionForCall((client) => this.sell(client, show));
  }

  async sellUnlocked(show: string): Promise<void> {
    await this.fence.transactionForCall((client) => this.sell(client, show));
  }

  @WhenLeader('box-office')
  async closeDay(show: string): Promise<string | undefined> {
    await this.fence.transactionForCall((client) => this.sell(client, show));
    return String(this.leadership.term('box-office')!.fencingToken);
  }
}

const fenceModule = (pool: Pool) => PgFenceModule.forRoot({ pool, table: fenceTable, install: true });

describe('PgFenceModule on ZooKeeper', () => {
  let app: INestApplication;
  let shows: Shows;
  let pool: Pool;

  beforeAll(async () => {
    pool = pg.pool();
    app = await startApp({ imports: [fenceModule(pool) as never], providers: [Shows] });
    shows = app.get(Shows);
  });
  afterAll(() => app.close());

  it('install: true creates the table during start-up; PgFence is injectable', async () => {
    expect(app.get(PgFence)).toBeInstanceOf(PgFence);
    expect(app.get(PgFence).table).toBe(fenceTable);
    expect(await pg.rows(fenceTable)).toEqual([]);
  });

  it('@WithLock: the call fences the resource of its lock, with its token, and commits', async () => {
    const first = await shows.sellOne('a');
    const second = await shows.sellOne('a');
    expect(BigInt(second.tokens['show:a'])).toBeGreaterThan(BigInt(first.tokens['show:a']));
    expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'show:a', token: second.tokens['show:a'] });
    expect((await pg.admin.query(`SELECT sold FROM ${seats} WHERE show = 'a'`)).rows).toEqual([{ sold: 2 }]);
  });

  it('nested locks: every write lock the call holds fences its own resource', async () => {
    const sale = await shows.sellInVenue('b');
    const rows = await pg.rows(fenceTable);
    expect(rows).toContainEqual({ resource: 'venue', token: sale.tokens.venue });
    expect(rows).toContainEqual({ resource: 'show:b', token: sale.tokens['show:b'] });
  });

  it('{ name } fences with that lock alone', async () => {
    await pg.admin.query(`DELETE FROM ${fenceTable}`);
    await shows.sellNamed('c');
    expect((await pg.rows(fenceTable)).map((row) => row.resource)).toEqual(['show:c']);
  });

  it('@WhenLeader: the term fences its group', async () => {
    const leadership = app.get(LeadershipService);
    await waitUntil(() => leadership.isLeader('box-office'), 'the only instance leads');
    const token = await shows.closeDay('d');
    expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'box-office', token });
  });

  it.each([
    ['outside any lock', (s: Shows) => s.sellUnlocked('e'), /holds no write lock and runs no leader work/],
    ['under a read lock only', (s: Shows) => s.sellUnderRead('e'), /\(it holds "show:e"\)/],
  ])('%s: NoFenceHoldError, nothing sent, nothing sold', async (_, call, message) => {
    const error = await call(shows).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NoFenceHoldError);
    expect((error as Error).message).toMatch(message);
    expect((await pg.admin.query(`SELECT sold FROM ${seats} WHERE show = 'e'`)).rows).toEqual([]);
  });

  it('a name the call does not hold: NoFenceHoldError naming what it holds, nothing sent', async () => {
    const recorded = recordingPool(pg.pool());
    const fence = new PgFence(recorded.pool, { table: fenceTable });
    const error = await app
      .get(LockService)
      .withLock('show:f', () => fence.transactionForCall(() => 1, { name: 'show:g' }))
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NoFenceHoldError);
    expect(error).toMatchObject({ requested: 'show:g', held: ['show:f'] });
    expect(recorded.statements).toEqual([]);
  });
});

describe('PgFenceModule.forRootAsync, and over forTesting()', () => {
  it('takes its options from a factory; tokens of the in-memory backend rise too, and are fenced', async () => {
    const pool = pg.pool();
    @Module({ providers: [{ provide: 'DB', useValue: pool }], exports: ['DB'] })
    class DbModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forTesting({ store: new InMemoryLockStore() }),
        PgFenceModule.forRootAsync({
          imports: [DbModule],
          inject: ['DB'],
          useFactory: (db: Pool) => ({ pool: db, table: pg.table('fence_memory'), install: true }),
        }),
      ],
      providers: [Shows],
    }).compile();
    const app = await moduleRef.init();
    try {
      const shows = app.get(Shows);
      const first = await shows.sellOne('m');
      const second = await shows.sellOne('m');
      expect(BigInt(second.tokens['show:m'])).toBeGreaterThan(BigInt(first.tokens['show:m']));
      expect(await pg.rows(pg.table('fence_memory'))).toEqual([{ resource: 'show:m', token: second.tokens['show:m'] }]);
    } finally {
      await app.close();
    }
  });

  it('createLockServiceMock(): its locks fence too, with tokens that rise', async () => {
    const mock = createLockServiceMock();
    const fence = new PgFence(pg.pool(), { table: pg.table('fence_mock') });
    await fence.install();
    const sell = () =>
      mock.withLock('show:mock', async (lock) => {
        await fence.transactionForCall((client) => client.query('SELECT 1'));
        return String(lock.fencingToken);
      });
    const first = await sell();
    const second = await sell();
    expect(BigInt(second)).toBeGreaterThan(BigInt(first));
    expect(await pg.rows(pg.table('fence_mock'))).toEqual([{ resource: 'show:mock', token: second }]);
  });

  it.each([
    [{ pool: undefined }, 'pool'],
    [{ pool: {} as Pool, table: 'x; DROP TABLE y' }, 'pool'],
    [{ pool: 'p' as unknown as Pool, instal: true }, 'instal'],
    [{ install: 'yes' }, 'install'],
  ])('refuses bad options at start-up with InvalidOptionError (%j)', async (options, option) => {
    const pool = pg.pool();
    const full = { pool, ...options } as never;
    const compiling = Test.createTestingModule({
      imports: [ZkLockModule.forTesting(), PgFenceModule.forRoot(full)],
    }).compile();
    const error = await compiling.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
  });
});
