import { ZkServer } from '../../test/support/zookeeper/zk-server.js';

/** The ZooKeeper the benchmark talks to: its own standalone server, or one given by ZK_CONNECT. */
export interface ZkTarget {
  readonly connectionString: string;
  /** true/false for the server it started; null for an external server (unknown). */
  readonly forceSync: boolean | null;
  readonly external: boolean;
  readonly tickTime: number | null;
  readonly jvmArgs: readonly string[] | null;
  stop(): Promise<void>;
}

/**
 * ZooKeeper's own scripts start the server with `-Xmx1000m` (zkEnv.sh) and the JVM's
 * default JIT and collector; the benchmark does the same, not the tests' quick-start
 * flags (C1 only), so the server is not slower than in production.
 */
const PRODUCTION_JVM_ARGS = ['-Xmx1000m'];

export async function openZkTarget(options: { connectionString?: string; forceSync: boolean; tickTime?: number }): Promise<ZkTarget> {
  if (options.connectionString) {
    return { connectionString: options.connectionString, forceSync: null, external: true, tickTime: null, jvmArgs: null, stop: async () => undefined };
  }
  const tickTime = options.tickTime ?? 2000;
  const server = new ZkServer({ tickTime, forceSync: options.forceSync, jvmArgs: PRODUCTION_JVM_ARGS });
  await server.start();
  return {
    connectionString: server.connectionString,
    forceSync: options.forceSync,
    external: false,
    tickTime,
    jvmArgs: PRODUCTION_JVM_ARGS,
    stop: () => server.destroy(),
  };
}
