import { FenceStoreError, InvalidOptionError, StaleFencingTokenError } from '../core/errors/errors.js';
import { fenceMessages } from '../core/errors/messages.js';
import type { ClientOf, FenceClient, FenceExecutor, FencePool } from './fence-executor.js';
import { callFenceHolder, checkResource, fenceHolder, type FenceHolder, type FenceLock } from './fence-holder.js';
import { checkSql, createTableSql, DEFAULT_FENCE_TABLE, highestSql, sqlTable } from './fence-sql.js';
import { checkToken, readToken } from './fence-token.js';

/** Options of `new PgFence(pool, options)`. */
export interface PgFenceOptions {
  /** The fence's table: a plain identifier, optionally schema-qualified. Default `zk_lock_fence`. */
  readonly table?: string;
}

/** Options of `fence.transaction(lock, fn, options)`. */
export interface FencedTransactionOptions {
  /**
   * The resource the token guards. Default: the lock's name, or a term's group. Not with a
   * multi-lock, whose locks each fence the resource of their own name.
   */
  readonly resource?: string;
}

/** Options of `fence.transactionForCall(fn, options)`. */
export interface FencedCallOptions {
  /** One lock name (or leader group) of those the call holds, to fence with it alone. */
  readonly name?: string;
}

/** Serialises concurrent `install()`s of one table (the first key of a two-key advisory lock: "zklf"). */
const INSTALL_LOCK = 0x7a6b6c66;

/**
 * Fencing in PostgreSQL: a table holding, per resource, the highest fencing token that has
 * written to it, and a check that stores a token only if none higher is stored, refusing
 * a holder that paused or lost its lock after a newer holder wrote (see docs/fencing.md).
 *
 * ```ts
 * const fence = new PgFence(pool);
 * await fence.install();
 * await locks.withLock('shows/42', (lock) =>
 *   fence.transaction(lock, (client) => client.query('UPDATE shows SET remaining = remaining - 1 WHERE id = 42')),
 * );
 * ```
 */
export class PgFence<P extends FencePool = FencePool> {
  /** The fence's table, as given (PostgreSQL folds it to lower case). */
  readonly table: string;
  private readonly checkSql: string;
  private readonly highestSql: string;

  constructor(
    private readonly pool: P,
    options: PgFenceOptions = {},
  ) {
    if (typeof pool?.connect !== 'function' || typeof pool.query !== 'function')
      throw new InvalidOptionError('pool', pool, fenceMessages.pool);
    this.table = sqlTable('table', options?.table ?? DEFAULT_FENCE_TABLE);
    this.checkSql = checkSql(this.table);
    this.highestSql = highestSql(this.table);
  }

  /**
   * The SQL that creates the fence's table if it does not exist, for teams that run their
   * own migrations: exactly the statement `install()` runs.
   */
  static schema(table: string = DEFAULT_FENCE_TABLE): string {
    return `${createTableSql(sqlTable('table', table))};`;
  }

  /**
   * Creates the table if it does not exist. Safe to run twice, and from several instances
   * at once: each runs `schema()` in a transaction that first takes an advisory lock on
   * the table's name, since two concurrent `CREATE TABLE IF NOT EXISTS` can both miss the
   * table and one then fails.
   */
  async install(): Promise<void> {
    const client = await this.connect('install its table');
    let failed: unknown;
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INSTALL_LOCK, this.table]);
      await client.query(PgFence.schema(this.table));
      await client.query('COMMIT');
    } catch (error) {
      failed = error;
      broken = !(await rollback(client));
    } finally {
      client.release(broken ? true : undefined);
    }
    if (failed !== undefined) throw new FenceStoreError(this.table, 'install its table', failed);
  }

  /**
   * Inside the caller's own transaction on `executor`: stores `token` as the highest seen
   * for `resource`, unless a higher one is stored, in one statement. Its row lock orders
   * concurrent writers of `resource` until their transactions end. Rejects with
   * `StaleFencingTokenError` (nothing stored) when a higher token is stored: roll back.
   * Bad arguments reject with `InvalidOptionError` and send nothing; a failed statement
   * (an ended client, a missing table) with `FenceStoreError`.
   */
  async check(executor: FenceExecutor, resource: string, token: bigint): Promise<void> {
    if (typeof executor?.query !== 'function')
      throw new InvalidOptionError('executor', executor, fenceMessages.executor);
    checkResource('resource', resource);
    checkToken(token);
    const { rows } = await this.send(executor, `check the token of "${resource}"`, this.checkSql, [
      resource,
      token.toString(),
    ]);
    if (rows.length > 0) return;
    // Refused. In the same transaction, now that the row is locked: the token that refused it.
    const highest = await executor.query(this.highestSql, [resource]).then(
      ({ rows: [row] }) => (row ? readToken(row) : null),
      () => null,
    );
    throw new StaleFencingTokenError(resource, token, highest);
  }

  /**
   * Runs `fn` in a fenced transaction: BEGIN, `check` of the lock's token (a multi-lock:
   * each lock's, in name order), `fn(client)`, COMMIT; ROLLBACK on any error. A lock that
   * is released or lost (a term ended) is refused before BEGIN and again before COMMIT
   * with its own `LockLostError`; if its signal aborts while the transaction runs, the
   * running statement is cancelled and the transaction rolled back.
   */
  async transaction<T>(
    lock: FenceLock,
    fn: (client: ClientOf<P>) => Promise<T> | T,
    options: FencedTransactionOptions = {},
  ): Promise<T> {
    return this.transact(fenceHolder(lock, options?.resource), fn);
  }

  private async transact<T>(holder: FenceHolder, fn: (client: ClientOf<P>) => Promise<T> | T): Promise<T> {
    holder.assertHeld();
    const client = (await this.connect('begin a transaction')) as ClientOf<P>;
    const { signal } = holder;
    let cancelling: Promise<unknown> | undefined;
    const cancel = (): void => void (cancelling ??= this.cancel(client));
    signal.addEventListener('abort', cancel, { once: true });
    let broken = false;
    try {
      return await this.run(client, holder, fn);
    } catch (error) {
      broken = !(await rollback(client));
      throw signal.aborted ? signal.reason : error;
    } finally {
      signal.removeEventListener('abort', cancel);
      // A cancel may still be on its way to this connection: close it rather than hand it
      // to the next user, whose statement the cancel could hit.
      client.release(broken || cancelling !== undefined ? true : undefined);
      await cancelling;
    }
  }

  /**
   * `transaction` for what the current call holds, for one line inside `@WithLock` and
   * `@WhenLeader` methods (and `withLock`, `withLocks`, `runAsLeader` callbacks): every
   * write lock the call chain holds fences the resource of its name, and every leader term
   * its work runs under fences its group, checked in name order. `{ name }` picks one of
   * them. Throws `NoFenceHoldError`, sending nothing, where the chain holds nothing to
   * fence with (outside such work, under read locks only, or nothing of that name).
   *
   * ```ts
   * @WithLock((showId: string) => `show:${showId}`)
   * sell(showId: string) {
   *   return this.fence.transactionForCall((client) => client.query('UPDATE ...'));
   * }
   * ```
   */
  transactionForCall<T>(fn: (client: ClientOf<P>) => Promise<T> | T, options: FencedCallOptions = {}): Promise<T> {
    return this.transact(callFenceHolder(options?.name), fn);
  }

  private async run<T>(
    client: ClientOf<P>,
    holder: FenceHolder,
    fn: (client: ClientOf<P>) => Promise<T> | T,
  ): Promise<T> {
    await this.send(client, 'begin a transaction', 'BEGIN');
    for (const { resource, token } of holder.resources) await this.check(client, resource, token);
    holder.assertHeld();
    const result = await fn(client);
    holder.assertHeld();
    await client.query('COMMIT');
    return result;
  }

  private async connect(what: string): Promise<FenceClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw new FenceStoreError(this.table, what, error);
    }
  }

  private async send(
    executor: FenceExecutor,
    what: string,
    text: string,
    values?: unknown[],
  ): Promise<{ rows: object[] }> {
    try {
      return await executor.query(text, values);
    } catch (error) {
      throw new FenceStoreError(this.table, what, error);
    }
  }

  /** Cancels what `client` runs now, through another connection of the pool; never rejects. */
  private cancel(client: FenceClient): Promise<unknown> {
    const pid = client.processID;
    if (typeof pid !== 'number') return Promise.resolve();
    return this.pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
  }
}

/** ROLLBACK; false when even that failed (the connection is then closed, not reused). */
function rollback(client: FenceExecutor): Promise<boolean> {
  return client.query('ROLLBACK').then(
    () => true,
    () => false,
  );
}
