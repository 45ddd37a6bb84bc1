import type { FencePool } from '../fence-executor.js';

/** Options of `PgFenceModule.forRoot` (and what `forRootAsync`'s factory returns). */
export interface PgFenceModuleOptions {
  /**
   * The pool the fence takes its transactions from: a node-postgres `Pool`, or anything
   * with `connect()` and `query(text, values)`. It stays yours: the module does not end it
   * at shutdown (end it in your own `onApplicationShutdown`, after the fenced work).
   */
  readonly pool: FencePool;
  /** The fence's table (see `PgFence`). Default `zk_lock_fence`. */
  readonly table?: string;
  /**
   * Creates the table during start-up if it does not exist (`fence.install()`), failing
   * the start-up when it cannot. Default `false`: run `PgFence.schema()` in your migrations.
   */
  readonly install?: boolean;
}
