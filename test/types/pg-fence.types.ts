/**
 * Compile-time checks of `nestjs-zk-lock/postgres` against node-postgres's own types,
 * type-checked by `npm test` (tsc): each `@ts-expect-error` must meet an error, or the type
 * check fails. Never run.
 */
import type { Client, Pool, PoolClient } from 'pg';

import type { LeaseHandle, LockHandle, MultiLockHandle, LeaderTerm } from '../../lib/index';
import { PgFence, type FenceExecutor } from '../../lib/postgres/index';

declare const pool: Pool;
declare const client: Client;
declare const poolClient: PoolClient;
declare const lock: LockHandle;
declare const group: MultiLockHandle;
declare const term: LeaderTerm;
declare const lease: LeaseHandle;

const fence = new PgFence(pool);

// A Pool, a Client and a PoolClient are executors as they are.
export const executors: FenceExecutor[] = [pool, client, poolClient];

// The transaction's client is node-postgres's PoolClient, typed queries included.
export const typed = fence.transaction(lock, async (tx) => {
  const inTransaction: PoolClient = tx;
  const { rows } = await inTransaction.query<{ n: number }>('SELECT 1 AS n');
  return rows[0].n;
});
export const sum: Promise<number> = typed;

export const kinds = [fence.transaction(group, () => 1), fence.transaction(term, () => 1)];

// A lease is accepted by its type (a lease of more than 1 is refused when called: its holders share).
export const leased: Promise<number> = fence.transaction(lease, () => 1);

// @ts-expect-error a token is a bigint (handle.fencingToken), not a number
export const numbered = fence.check(pool, 'orders/42', 42);

// @ts-expect-error a Client is one connection, not a pool: what its connect() gives has no release()
export const notAPool = new PgFence(client);
