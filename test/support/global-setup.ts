import { PgServer } from './postgres/pg-server';
import { ZkServer } from './zookeeper/zk-server';

declare global {
  var __ZK_SERVER__: ZkServer | undefined;
  var __PG_SERVER__: PgServer | undefined;
}

/**
 * Starts one throwaway standalone ZooKeeper for the whole run (free port on 127.0.0.1,
 * temporary data dir, tickTime 200 ms so sessions may be as short as 400 ms), unless
 * ZK_CONNECT names a server to use; and one throwaway PostgreSQL (see PgServer), unless
 * PG_TEST_URL names one. Test workers inherit ZK_CONNECT and PG_TEST_URL.
 */
export default async function globalSetup(): Promise<void> {
  await Promise.all([startZooKeeper(), startPostgres()]);
}

async function startPostgres(): Promise<void> {
  if (process.env.PG_TEST_URL) return;
  const server = new PgServer();
  try {
    await server.start();
  } catch (error) {
    await server.destroy(); // no server or folder left behind by a start that failed halfway
    throw error;
  }
  globalThis.__PG_SERVER__ = server;
  process.env.PG_TEST_URL = server.url;
}

async function startZooKeeper(): Promise<void> {
  if (process.env.ZK_CONNECT) return;
  const server = new ZkServer({ tickTime: 200 });
  await server.start();
  globalThis.__ZK_SERVER__ = server;
  process.env.ZK_CONNECT = server.connectionString;
  process.env.ZK_TEST_SERVER_STARTED = '1';
  process.env.ZK_SERVER_PID = String(server.pid);
}
