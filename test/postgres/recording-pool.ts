import type { Pool, PoolClient } from 'pg';

/**
 * A pool that logs every statement sent through it or its clients, in order, with its
 * values, then sends it on: what the fence ran, as the server was asked it.
 */
export function recordingPool(pool: Pool): { pool: Pool; statements: string[]; values: unknown[][] } {
  const statements: string[] = [];
  const values: unknown[][] = [];
  const record = <T extends Pool | PoolClient>(target: T): T => {
    const query = target.query.bind(target) as (text: string, values?: unknown[]) => Promise<unknown>;
    return new Proxy(target, {
      get(object, key) {
        if (key === 'query')
          return (text: string, given?: unknown[]) => {
            statements.push(text);
            values.push(given ?? []);
            return query(text, given);
          };
        if (key === 'connect') return async () => record(await pool.connect());
        const value = Reflect.get(object, key, object) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
      },
    });
  };
  return { pool: record(pool), statements, values };
}
