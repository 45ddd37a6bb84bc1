import type { RecordData, StoredRecord } from '../port/lock-backend.js';
import type { ResolvedWriteRecord } from '../port/options.js';
import { ensurePath } from './queue/directory.js';
import type { ZkSession } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { RecordUnreadableError } from '../errors/errors.js';

/**
 * Records (`readRecord`, `writeRecord`) are persistent nodes holding UTF-8 JSON, one per
 * name, under `<rootPath>-records/`: beside the lock directories, not inside them, so no
 * lock queue (ours, Kazoo's, Curator's) ever reads one as a contender, `locks()` never
 * lists one and the directory sweeper never waits on one.
 */
export function recordsRoot(rootPath: string): string {
  return `${rootPath}-records`;
}

/** The record at `path`, or `null` where there is none. */
export async function readRecordAt(session: ZkSession, path: string): Promise<StoredRecord | null> {
  try {
    const { data, stat } = await session.getDataAndStat(path);
    return { data: recordData(path, data), version: stat.version ?? 0, writtenAt: stat.mtimeMs! };
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return null;
    throw error;
  }
}

/** A record's bytes as the JSON object written there, or `RecordUnreadableError`. */
function recordData(path: string, bytes: Buffer): RecordData {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new RecordUnreadableError(path, error);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new RecordUnreadableError(path);
  return data as RecordData;
}

/**
 * Writes the record at `path` as `write` says: `expectedVersion` `null` is a create (which
 * ZooKeeper refuses where a node exists), a number a `setData` at that version; `undefined`
 * a `setData` at any version, or a create where there is none. `false` when the version
 * check failed.
 */
export async function writeRecordAt(session: ZkSession, path: string, write: ResolvedWriteRecord): Promise<boolean> {
  const data = Buffer.from(write.json, 'utf8');
  const { expectedVersion } = write;
  for (;;) {
    try {
      if (expectedVersion === null) await createIn(session, path, data);
      else await session.setData(path, data, expectedVersion ?? -1);
      return true;
    } catch (error) {
      if (expectedVersion === null && isZkCode(error, 'NODE_EXISTS')) return false;
      if (expectedVersion !== undefined && isZkCode(error, 'BAD_VERSION')) return false;
      if (expectedVersion !== undefined && isZkCode(error, 'NO_NODE')) return false;
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
    // Any version, and no node yet: create it; another writer's create first means set again.
    try {
      await createIn(session, path, data);
      return true;
    } catch (error) {
      if (!isZkCode(error, 'NODE_EXISTS')) throw error;
    }
  }
}

/**
 * ZooKeeper's time, as `LockBackend.serverTime`: only a write tells it (the leader stamps
 * its `mtime` between the request and the answer), so an empty write at any version to
 * the records' root, which no reader looks at (creating it the first time).
 */
export async function serverTimeAt(session: ZkSession, root: string): Promise<number> {
  for (;;) {
    try {
      return (await session.setData(root, Buffer.alloc(0))).mtimeMs!;
    } catch (error) {
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
    await ensurePath(session, root);
  }
}

/** Creates the record node, and its parent the first time. */
async function createIn(session: ZkSession, path: string, data: Buffer): Promise<void> {
  try {
    await session.create(path, data, 'persistent');
  } catch (error) {
    if (!isZkCode(error, 'NO_NODE')) throw error;
    await ensurePath(session, path.slice(0, path.lastIndexOf('/')));
    await session.create(path, data, 'persistent');
  }
}
