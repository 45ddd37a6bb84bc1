// `nestjs-zk-lock/postgres`: fencing in PostgreSQL. A separate entry point, so that
// applications without it load nothing of it; it imports no driver itself (node-postgres,
// an optional peer, is what users pass in).
export { PgFence, type PgFenceOptions, type FencedTransactionOptions, type FencedCallOptions } from './pg-fence.js';
export type { FenceExecutor, FenceClient, FencePool, ClientOf } from './fence-executor.js';
export type { FenceLock } from './fence-holder.js';
export { assertFencedUpdate, type FencedRowOptions, type UpdateResult } from './fenced-row.js';
export {
  StaleFencingTokenError,
  FenceStoreError,
  NoFenceHoldError,
  InvalidOptionError,
} from '../core/errors/errors.js';

// Nest: PgFence as a provider (PgFenceModule.forRoot / forRootAsync).
export { PgFenceModule } from './nest/pg-fence.module.js';
export type { PgFenceModuleOptions } from './nest/pg-fence-module.options.js';
export type {
  PgFenceForRootOptions,
  PgFenceAsyncOptions,
  PgFenceOptionsFactory,
} from './nest/pg-fence.module-definition.js';

// Executors for the ORMs: fence.check(executor, resource, token) inside their own transactions.
export { typeormExecutor, type TypeormManager, type TypeormQueryRunner } from './executors/typeorm-executor.js';
export { knexExecutor, type KnexTransaction } from './executors/knex-executor.js';
export { kyselyExecutor, type KyselyTransaction, type KyselyRawQuery } from './executors/kysely-executor.js';
