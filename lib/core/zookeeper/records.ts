import type { RecordData, StoredRecord } from '../port/lock-backend.js';
import type { ResolvedWriteRecord } from '../port/options.js';
import { ensurePath } from './queue/directory.js';
import type { ZkMultiOp, ZkSession } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { LockLostError, RecordUnreadableError, ZkOperationError } from '../errors/errors.js';
import { lockMessages } from '../errors/messages.js';

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

/** The lock a record write is made under (`whileHolding`): its name, and its node's full path. */
export interface HeldNode {
  readonly name: string;
  readonly path: string;
}

/**
 * Writes the record at `path` as `write` says: `expectedVersion` `null` is a create (which
 * ZooKeeper refuses where a node exists), a number a `setData` at that version; `undefined`
 * a `setData` at any version, or a create where there is none. `false` when the version
 * check failed. With `held`, each write goes in one transaction with a check that the
 * lock's node exists: `LockLostError` when it does not, nothing written.
 */
export async function writeRecordAt(
  session: ZkSession,
  path: string,
  write: ResolvedWriteRecord,
  held?: HeldNode,
): Promise<boolean> {
  const data = Buffer.from(write.json, 'utf8');
  const { expectedVersion } = write;
  const writes = recordWrites(session, path, data, held);
  for (;;) {
    try {
      if (expectedVersion === null) await writes.create();
      else await writes.set(expectedVersion ?? -1);
      return true;
    } catch (error) {
      if (expectedVersion === null && isZkCode(error, 'NODE_EXISTS')) return false;
      if (expectedVersion !== undefined && isZkCode(error, 'BAD_VERSION')) return false;
      if (expectedVersion !== undefined && isZkCode(error, 'NO_NODE')) return false;
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
    // Any version, and no node yet: create it; another writer's create first means set again.
    try {
      await writes.create();
      return true;
    } catch (error) {
      if (!isZkCode(error, 'NODE_EXISTS')) throw error;
    }
  }
}

/** The record's create (its parent made the first time) and versioned set, under `held`'s check when given. */
function recordWrites(session: ZkSession, path: string, data: Buffer, held: HeldNode | undefined) {
  const checked = async (op: ZkMultiOp): Promise<void> => {
    if (!held) {
      if (op.op === 'create') await session.create(path, data, 'persistent');
      else if (op.op === 'set') await session.setData(path, data, op.version);
      return;
    }
    try {
      await session.multi([{ op: 'check', path: held.path }, op]);
    } catch (error) {
      if (error instanceof ZkOperationError && error.path === held.path && error.zkCode === 'NO_NODE')
        throw new LockLostError(held.name, lockMessages.nodeGoneAtWrite);
      throw error;
    }
  };
  const create = (): Promise<void> => checked({ op: 'create', path, data, mode: 'persistent' });
  return {
    async create(): Promise<void> {
      try {
        await create();
      } catch (error) {
        if (!isZkCode(error, 'NO_NODE')) throw error;
        await ensurePath(session, path.slice(0, path.lastIndexOf('/')));
        await create();
      }
    },
    set: (version: number): Promise<void> => checked({ op: 'set', path, data, version }),
  };
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
