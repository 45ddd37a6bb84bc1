import { InvalidOptionError } from '../core/errors/errors.js';
import { fenceMessages } from '../core/errors/messages.js';

/** The fence's table when none is named. */
export const DEFAULT_FENCE_TABLE = 'zk_lock_fence';

/** A plain, unquoted SQL identifier: PostgreSQL folds it to lower case. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** `name`, checked to be a plain identifier (unquoted, so nothing in it can inject SQL). */
export function sqlIdentifier(option: string, name: unknown): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name))
    throw new InvalidOptionError(option, name, fenceMessages.column);
  return name;
}

/** `table`, checked to be a plain identifier, optionally schema-qualified. */
export function sqlTable(option: string, table: unknown): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part)))
    throw new InvalidOptionError(option, table, fenceMessages.table);
  return table as string;
}

/**
 * The fence's table. The token is a `bigint`: fencing tokens are ZooKeeper zxids (a
 * signed 64-bit long, the leader epoch in its high half), so every one fits, and a bigint
 * compares natively and is half the size of a `numeric(20)`.
 */
export function createTableSql(table: string): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${table} (\n` +
    '  resource text PRIMARY KEY,\n' +
    '  token bigint NOT NULL CHECK (token >= 0),\n' +
    '  updated_at timestamptz NOT NULL DEFAULT now()\n' +
    ')'
  );
}

/**
 * Stores the token unless a higher one is stored: the one statement of a check. A row
 * comes back only when the token was stored. Either way the statement locks the
 * resource's row until the transaction ends (ON CONFLICT DO UPDATE locks the row it met,
 * whether its WHERE passes or not), so concurrent writers of one resource go one at a time.
 */
export function checkSql(table: string): string {
  return (
    `INSERT INTO ${table} AS fence (resource, token) VALUES ($1, $2::bigint)\n` +
    'ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, updated_at = now()\n' +
    'WHERE fence.token <= EXCLUDED.token\n' +
    'RETURNING fence.token'
  );
}

/** The highest token stored for a resource, for the error of a refused check. */
export function highestSql(table: string): string {
  return `SELECT token FROM ${table} WHERE resource = $1`;
}
