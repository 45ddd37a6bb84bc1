import { ZkLockBackend, type ZkLockOptions } from '../../lib/index.js';

/** What every worker is told about its lock client: where ZooKeeper is, and the test's root. */
export interface ConnectArgs {
  readonly connectionString: string;
  readonly rootPath: string;
  /** Default: the library's. */
  readonly sessionTimeoutMs?: number;
}

/** The worker's arguments: one JSON object, its process's first argument (see `runWorker`, `WorkerProcess`). */
export function workerArgs<A extends ConnectArgs>(): A {
  return JSON.parse(process.argv[2]) as A;
}

/** The worker's lock client, connected as its arguments say; `options` for what the worker sets itself. */
export function connectFromArgs(args: ConnectArgs, options: Partial<ZkLockOptions> = {}): Promise<ZkLockBackend> {
  const { connectionString, rootPath, sessionTimeoutMs } = args;
  return ZkLockBackend.connect({
    connectionString,
    rootPath,
    ...(sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs }),
    ...options,
  });
}
