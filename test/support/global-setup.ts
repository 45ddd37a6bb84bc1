import { ZkServer } from './zookeeper/zk-server';

declare global {
  var __ZK_SERVER__: ZkServer | undefined;
}

/**
 * Starts one throwaway standalone ZooKeeper for the whole run (free port on 127.0.0.1,
 * temporary data dir, tickTime 200 ms so sessions may be as short as 400 ms), unless
 * ZK_CONNECT names a server to use. Test workers inherit ZK_CONNECT.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.ZK_CONNECT) return;
  const server = new ZkServer({ tickTime: 200 });
  await server.start();
  globalThis.__ZK_SERVER__ = server;
  process.env.ZK_CONNECT = server.connectionString;
  process.env.ZK_TEST_SERVER_STARTED = '1';
  process.env.ZK_SERVER_PID = String(server.pid);
}
