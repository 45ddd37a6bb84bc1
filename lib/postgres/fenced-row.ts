import { InvalidOptionError, StaleFencingTokenError } from '../core/errors/errors.js';
import { fenceMessages } from '../core/errors/messages.js';
import type { FenceExecutor } from './fence-executor.js';
import { checkToken, readToken } from './fence-token.js';
import { sqlIdentifier, sqlTable } from './fence-sql.js';

/** Which row a fenced UPDATE meant, and with which token (see `assertFencedUpdate`). */
export interface FencedRowOptions {
  /** The table the UPDATE wrote, e.g. `"shows"` (a plain identifier, optionally schema-qualified). */
  readonly table: string;
  /** The columns and values that identify the row, e.g. `{ id: 42 }`. */
  readonly key: Readonly<Record<string, unknown>>;
  /** The fencing token the UPDATE wrote under. */
  readonly token: bigint;
  /** The row's token column. Default `fence_token`. */
  readonly column?: string;
}

/** What an UPDATE answered: node-postgres's `rowCount`, or `affectedRows` (pglite and others). */
export interface UpdateResult {
  readonly rowCount?: number | null;
  readonly affectedRows?: number;
}

/**
 * For teams that keep the token on their own rows: after your fenced UPDATE (`UPDATE shows
 * SET …, fence_token = $2 WHERE id = $1 AND fence_token <= $2`), tells why it matched no
 * row. Resolves `true` when it updated a row (no statement sent); `false` when the row is
 * missing or your other conditions did not match it (the token was not the reason); and
 * rejects with `StaleFencingTokenError`, as `PgFence.check` does, when the row holds a
 * higher token: a newer holder has written it. Run it in the UPDATE's transaction.
 */
export async function assertFencedUpdate(
  executor: FenceExecutor,
  result: UpdateResult,
  options: FencedRowOptions,
): Promise<boolean> {
  const { table, key, token, column = 'fence_token' } = (options ?? {}) as FencedRowOptions;
  const where = keyColumns(key);
  const sql = `SELECT ${sqlIdentifier('column', column)} AS token FROM ${sqlTable('table', table)} WHERE ${where
    .map((name, i) => `${name} = $${i + 1}`)
    .join(' AND ')}`;
  checkToken(token);
  const updated = result?.rowCount ?? result?.affectedRows;
  if (typeof updated !== 'number') throw new InvalidOptionError('result', result, fenceMessages.result);
  if (updated > 0) return true;
  const { rows } = await executor.query(
    sql,
    where.map((name) => key[name]),
  );
  const stored = rows.length > 0 ? readToken(rows[0]) : null;
  if (stored !== null && stored > token) throw new StaleFencingTokenError(`${table} ${describe(key)}`, token, stored);
  return false;
}

function keyColumns(key: unknown): string[] {
  const names = key !== null && typeof key === 'object' ? Object.keys(key) : [];
  if (names.length === 0) throw new InvalidOptionError('key', key, fenceMessages.key);
  return names.map((name) => sqlIdentifier(`key.${name}`, name));
}

/** `{"id":42}`, bigints as numbers. */
const describe = (key: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(key, (_, value: unknown) => (typeof value === 'bigint' ? Number(value) : value));
