/**
 * Compile-time checks of the ORM executors against each ORM's own types, type-checked by
 * `npm test` (tsc): each `@ts-expect-error` must meet an error, or the type check fails.
 * Never run.
 */
import type { Knex } from 'knex';
import type { ControlledTransaction, Kysely, Transaction } from 'kysely';
import type { Pool } from 'pg';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

import {
  knexExecutor,
  kyselyExecutor,
  typeormExecutor,
  type FenceExecutor,
  type PgFence,
} from '../../lib/postgres/index';

declare const fence: PgFence;
declare const dataSource: DataSource;
declare const manager: EntityManager;
declare const runner: QueryRunner;
declare const knex: Knex;
declare const trx: Knex.Transaction;
declare const db: Kysely<{ shows: { id: number } }>;
declare const kyselyTrx: Transaction<{ shows: { id: number } }>;
declare const controlled: ControlledTransaction<{ shows: { id: number } }>;
declare const pool: Pool;

// Each ORM's transaction object fits its adapter as it is, and the result is an executor.
export const executors: FenceExecutor[] = [
  typeormExecutor(manager),
  typeormExecutor(runner),
  typeormExecutor(dataSource.manager), // an EntityManager: whether it is in a transaction is told when called
  knexExecutor(trx),
  kyselyExecutor(kyselyTrx),
  kyselyExecutor(controlled),
];

export const inTransaction = dataSource.transaction((em) => fence.check(typeormExecutor(em), 'r', 1n));
export const inKnex = knex.transaction((t) => fence.check(knexExecutor(t), 'r', 1n));
export const inKysely = db.transaction().execute((t) => fence.check(kyselyExecutor(t), 'r', 1n));

// @ts-expect-error a DataSource is not a manager or a runner: pass the transaction's manager
export const notManager = typeormExecutor(dataSource);

// @ts-expect-error a pg Pool is an executor already, not a Knex transaction
export const notKnex = knexExecutor(pool);

// @ts-expect-error a Knex transaction is not a Kysely one
export const crossed = kyselyExecutor(trx);
