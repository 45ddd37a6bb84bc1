import { fenceMessages } from '../../core/errors/messages.js';
import type { FenceExecutor } from '../fence-executor.js';
import { transactionExecutor } from './transaction-executor.js';

/** What the adapter uses of a TypeORM `QueryRunner` (typeorm 0.3 and 1.x); TypeORM's own type fits. */
export interface TypeormQueryRunner {
  readonly isTransactionActive: boolean;
  readonly isReleased: boolean;
  query(query: string, parameters: unknown[] | undefined, useStructuredResult: true): Promise<{ records: unknown[] }>;
}

/** What the adapter uses of a TypeORM `EntityManager`: the query runner of its transaction. */
export interface TypeormManager {
  readonly queryRunner?: TypeormQueryRunner;
}

/**
 * A `FenceExecutor` on a TypeORM transaction, for `fence.check(...)` inside it: the
 * `EntityManager` that `dataSource.transaction(async (manager) => …)` hands you, or a
 * `QueryRunner` after `startTransaction()`. Refused (`InvalidOptionError`) unless its
 * transaction is active, when made and before each statement: `dataSource.manager`,
 * outside any transaction, would lock nothing and commit the token at once. Loads nothing
 * of TypeORM.
 */
export function typeormExecutor(managerOrRunner: TypeormManager | TypeormQueryRunner): FenceExecutor {
  const runner = (): TypeormQueryRunner | undefined =>
    'isTransactionActive' in managerOrRunner ? managerOrRunner : managerOrRunner.queryRunner;
  return transactionExecutor(
    'manager',
    managerOrRunner,
    fenceMessages.typeorm,
    () => {
      const active = runner();
      return active?.isTransactionActive === true && !active.isReleased && typeof active.query === 'function';
    },
    async (text, values) => ({ rows: (await runner()!.query(text, values, true)).records as object[] }),
  );
}
