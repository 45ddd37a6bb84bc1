import { randomBytes } from 'node:crypto';

import { fenceMessages } from '../../core/errors/messages.js';
import type { FenceExecutor } from '../fence-executor.js';
import { transactionExecutor } from './transaction-executor.js';

/**
 * Kysely's public `CompiledQuery` interface, as `CompiledQuery.raw(sql, parameters)` builds
 * it: the SQL as one raw node, the parameters, and an id for plugins.
 */
export interface KyselyRawQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: {
    readonly kind: 'RawNode';
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly [];
  };
  readonly queryId: { readonly queryId: string };
}

/** What the adapter uses of a Kysely transaction (`Transaction` or `ControlledTransaction`, which fit). */
export interface KyselyTransaction {
  readonly isTransaction: boolean;
  readonly isCommitted?: boolean;
  readonly isRolledBack?: boolean;
  executeQuery(query: KyselyRawQuery): Promise<{ rows: unknown[] }>;
}

/**
 * A `FenceExecutor` on a Kysely transaction (`db.transaction().execute(async (trx) => …)`,
 * or `db.startTransaction().execute()`, with the Postgres dialect), for `fence.check(...)`
 * inside it. Refused (`InvalidOptionError`) unless `trx` is a transaction, not committed
 * or rolled back (a `ControlledTransaction` tells), when made and before each statement.
 *
 * It imports nothing of Kysely: it builds the compiled query `CompiledQuery.raw` would,
 * by its public interface, so that this module loads without Kysely installed and with
 * whichever copy of Kysely the application has (no peer to resolve from this package).
 */
export function kyselyExecutor(trx: KyselyTransaction): FenceExecutor {
  return transactionExecutor(
    'trx',
    trx,
    fenceMessages.kysely,
    () => trx.isTransaction === true && typeof trx.executeQuery === 'function' && !trx.isCommitted && !trx.isRolledBack,
    async (sql, parameters) => {
      const query = { kind: 'RawNode', sqlFragments: [sql], parameters: [] } as const;
      const queryId = { queryId: randomBytes(4).toString('hex') };
      const { rows } = await trx.executeQuery({ sql, parameters, query, queryId });
      return { rows: rows as object[] };
    },
  );
}
