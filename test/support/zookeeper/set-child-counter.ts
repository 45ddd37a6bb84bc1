import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { zookeeperClasspath } from './zk-install';
import type { ZkServer } from './zk-server';

const run = promisify(execFile);

const TOOL = join(__dirname, 'SetChildCounter.java');
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * Sets the child counter (`cversion`) of the znode `path` on a standalone `server`, the
 * number ZooKeeper gives the next sequential child of `path`: lets tests reach the
 * sequence limit (2^31 - 1) without two billion creates.
 *
 * `cversion` is the counter as the server stores it (StatPersisted): the number of child
 * creates, which only creates raise, and the next sequential suffix. Clients read
 * `Stat.cversion` as `2 × stored − numChildren` in 32 bits (DataNode.copyStat), so after
 * `setChildCounter(server, '/dir', 2147483640)` on a childless /dir they see -16.
 *
 * The server is stopped (SIGKILL), SetChildCounter.java rewrites its database offline (it
 * restores the latest snapshot plus the transaction logs, changes the stat, saves a new
 * snapshot at the last zxid so that no log entry is replayed over it, and checks that by
 * restoring again), and the same server is started again on the same port and data; this
 * resolves once it serves. Clients see a disconnection; sessions usually survive it (they
 * are in the snapshot), but tests should not count on that. The server is restarted even
 * when the tool fails; the failure is thrown then.
 */
export async function setChildCounter(server: ZkServer, path: string, cversion: number): Promise<void> {
  if (!Number.isInteger(cversion) || cversion < INT32_MIN || cversion > INT32_MAX) {
    throw new RangeError(`setChildCounter: cversion must be a 32-bit signed integer, got ${cversion}`);
  }
  if (!path.startsWith('/')) throw new Error(`setChildCounter: "${path}" is not an absolute znode path`);
  await server.stop();
  let failure: unknown;
  try {
    const { stdout } = await run(
      'java',
      [
        '-Xmx128m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
        '-cp',
        zookeeperClasspath(),
        TOOL,
        join(server.dataDir, 'data'), // ZkServer's `dataDir=` (it holds version-2/)
        path,
        String(cversion),
      ],
      { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 },
    );
    if (!/^ok /m.test(stdout)) throw new Error(`SetChildCounter printed no result: ${stdout}`);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr;
    failure = stderr ? new Error(`SetChildCounter failed: ${stderr.trim()}`, { cause: error }) : error;
  }
  await server.start();
  if (failure) throw failure;
}
