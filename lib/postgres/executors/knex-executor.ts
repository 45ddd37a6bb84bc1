import { fenceMessages } from '../../core/errors/messages.js';
import type { FenceExecutor } from '../fence-executor.js';
import { toQuestionMarks } from './question-marks.js';
import { transactionExecutor } from './transaction-executor.js';

/** What the adapter uses of a Knex transaction (`Knex.Transaction`, which fits). */
export interface KnexTransaction {
  readonly isTransaction?: boolean;
  isCompleted(): boolean;
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<unknown>;
}

/**
 * A `FenceExecutor` on a Knex transaction (`knex.transaction(async (trx) => …)`, client
 * `pg`), for `fence.check(...)` inside it. The fence's `$n` placeholders are sent as Knex's
 * `?` (see `toQuestionMarks`). Refused (`InvalidOptionError`) unless `trx` is a transaction
 * not yet committed or rolled back, when made and before each statement: the `knex`
 * instance itself would run the check outside any transaction, locking nothing. Loads
 * nothing of Knex.
 */
export function knexExecutor(trx: KnexTransaction): FenceExecutor {
  return transactionExecutor(
    'trx',
    trx,
    fenceMessages.knex,
    () => trx.isTransaction === true && typeof trx.raw === 'function' && !trx.isCompleted(),
    async (text, values) => {
      const { sql, bindings } = toQuestionMarks(text, values);
      const result = (await trx.raw(sql, bindings)) as { rows?: object[] };
      return { rows: result.rows ?? [] };
    },
  );
}
