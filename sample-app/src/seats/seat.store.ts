import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Pool, type PoolClient } from 'pg';

import { PgFence } from '../../../lib/postgres/index.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { showLock } from '../shows/show.model.js';
import { ShowNotFoundError, SoldOutError } from '../shows/show.errors.js';
import { NoDatabaseError } from './seat.errors.js';
import type { SaleWrite, Seat, SeatSale } from './seat.model.js';

const TABLE = 'sample_app_seats';
/** Serialises the instances' `CREATE TABLE IF NOT EXISTS` at start-up (two at once can both miss the table). */
const CREATE_LOCK = `SELECT pg_advisory_xact_lock(hashtext('${TABLE}'))`;
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  show_id text NOT NULL,
  seat int NOT NULL,
  customer text,
  instance text,
  fencing_token bigint,
  PRIMARY KEY (show_id, seat)
)`;

/**
 * The shows' seats in PostgreSQL (DATABASE_URL), one row per seat, and the fence
 * (`PgFence`, its table `zk_lock_fence`) that refuses a sale written under a token lower
 * than one the store has seen. A sale is a read (the lowest free seat) and then a write
 * (that seat to the customer) in a transaction that first checks the token.
 */
@Injectable()
export class SeatStore implements OnModuleInit, OnModuleDestroy {
  private readonly pool: Pool | undefined;
  private readonly fence: PgFence<Pool> | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (!config.databaseUrl) return;
    this.pool = new Pool({ connectionString: config.databaseUrl, max: 8 });
    this.fence = new PgFence(this.pool);
  }

  async onModuleInit(): Promise<void> {
    if (!this.pool || !this.fence) return;
    await this.fence.install();
    await this.inTransaction(async (client) => {
      await client.query(CREATE_LOCK);
      await client.query(CREATE_TABLE);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool?.end();
  }

  /** Opens the show with `seats` free seats, or resets it. */
  async open(showId: string, seats: number): Promise<void> {
    await this.inTransaction(async (client) => {
      await client.query(`DELETE FROM ${TABLE} WHERE show_id = $1`, [showId]);
      await client.query(`INSERT INTO ${TABLE} (show_id, seat) SELECT $1, generate_series(1, $2::int)`, [
        showId,
        seats,
      ]);
    });
  }

  /** The lowest free seat of the show: the read of a sale. */
  async freeSeat(showId: string): Promise<number> {
    const { rows } = await this.db().query<{ free: number | null; seats: number }>(
      `SELECT min(seat) FILTER (WHERE customer IS NULL) AS free, count(*)::int AS seats FROM ${TABLE} WHERE show_id = $1`,
      [showId],
    );
    if (rows[0].seats === 0) throw new ShowNotFoundError(showId);
    if (rows[0].free === null) throw new SoldOutError(showId);
    return rows[0].free;
  }

  /**
   * The write of a sale: the seat to the customer, in a transaction that, `fenced`, first
   * checks the sale's token with `PgFence.check` (a stale one: `StaleFencingTokenError`,
   * rolled back, answered 409). `unfenced` is the control, which writes whatever its token.
   */
  async write(sale: SeatSale, write: SaleWrite): Promise<void> {
    await this.inTransaction(async (client) => {
      if (write === 'fenced') await this.fence!.check(client, showLock(sale.showId), BigInt(sale.fencingToken));
      await client.query(
        `UPDATE ${TABLE} SET customer = $3, instance = $4, fencing_token = $5 WHERE show_id = $1 AND seat = $2`,
        [sale.showId, sale.seat, sale.customer, sale.instance, sale.fencingToken],
      );
    });
  }

  /** Every seat of the show, in seat order: the database's own state. */
  async seats(showId: string): Promise<Seat[]> {
    const { rows } = await this.db().query<Seat>(
      `SELECT seat, customer, instance, fencing_token::text AS "fencingToken" FROM ${TABLE} WHERE show_id = $1 ORDER BY seat`,
      [showId],
    );
    if (rows.length === 0) throw new ShowNotFoundError(showId);
    return rows;
  }

  private db(): Pool {
    if (!this.pool) throw new NoDatabaseError();
    return this.pool;
  }

  private async inTransaction(fn: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await this.db().connect();
    try {
      await client.query('BEGIN');
      await fn(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
}
