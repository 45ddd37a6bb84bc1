/**
 * What the fence sends its statements through: anything with `query(text, values)` that
 * answers with the rows. A node-postgres `Client`, `PoolClient` or `Pool` fits as it is;
 * other drivers and ORMs fit through a small adapter that produces one. The fence uses
 * nothing else of it: no driver-specific API, so an embedded PostgreSQL works too.
 */
export interface FenceExecutor {
  query(text: string, values?: unknown[]): Promise<{ rows: object[] }>;
}

/** A connection taken from a `FencePool` for one transaction (node-postgres: a `PoolClient`). */
export interface FenceClient extends FenceExecutor {
  /**
   * Gives the connection back; with an error (or `true`), closes it instead (node-postgres's
   * `PoolClient.release(err)`).
   */
  release(destroy?: boolean | Error): void;
  /**
   * The server process of this connection (node-postgres sets it): lets the fence cancel a
   * statement that runs when the lock is lost. Without it, the statement finishes first.
   */
  readonly processID?: number | null;
}

/** Where `PgFence` takes its connections from: a node-postgres `Pool`, or alike. */
export interface FencePool<C extends FenceClient = FenceClient> extends FenceExecutor {
  connect(): Promise<C>;
}

/**
 * The client type a pool's `connect()` resolves with. node-postgres's `Pool.connect` is
 * overloaded (a promise, or a callback): TypeScript infers from the last overload alone
 * unless the pattern has as many, so the first branch matches that pair.
 */
export type ClientOf<P extends FencePool> = P extends {
  connect(): Promise<infer C>;
  connect(callback: never): void;
}
  ? C
  : P extends { connect(): Promise<infer C> }
    ? C
    : FenceClient;
