import { InvalidOptionError } from '../errors/errors.js';

/**
 * What a member says about itself: a plain JSON object (stored as its `JSON.stringify`,
 * up to `MAX_MEMBER_DATA_BYTES`), e.g. `{ "host": "api-3", "zone": "eu-1" }`.
 */
export type MemberData = { readonly [key: string]: unknown };

/**
 * The largest member data, as UTF-8 JSON: a whole group is read in one request (ZooKeeper:
 * one `multiRead` of up to 500 nodes), which must stay below ZooKeeper's 1 MB packet limit.
 * Say who you are, not what you store.
 */
export const MAX_MEMBER_DATA_BYTES = 1024;

/** One member of a group, as `groupMembers()` and `GroupMembership.members()` report it. */
export interface GroupMember {
  /** The id it joined with (unique in the group). */
  readonly id: string;
  readonly data: MemberData;
  /** When this entry was made (ZooKeeper: the node's `ctime`, by the leader's clock). A member made again after a lost session has a later one. */
  readonly since: Date;
  /** The ZooKeeper session that owns the entry, `0x…` (ZooKeeper only). */
  readonly sessionId?: string;
}

/**
 * This client's entry in a group (`LockBackend.joinGroup`): it lasts until `leave()`, the
 * backend's `close()`, or another client joining with the same id. A lost session does
 * not end it: the entry is made again in the next session (ZooKeeper), and a session
 * given back keeps it.
 */
export interface GroupEntry extends AsyncDisposable {
  readonly group: string;
  readonly id: string;
  /**
   * Aborts with a `MemberReplacedError` when the entry is gone for good while this client
   * lives: another client joined with the same id, or deleted it. Never for a lost session.
   */
  readonly signal: AbortSignal;
  /** Deletes the entry (once; again does nothing). Resolves once the delete is answered, or the backend is closed. */
  leave(): Promise<void>;
}

/**
 * What `LockBackend.watch` watches: a lock's queue (its holders and waiters, by lock name),
 * a record (by record name), or a group's members (by group name).
 */
export type WatchTarget =
  | { readonly lock: string; readonly record?: never; readonly group?: never }
  | { readonly record: string; readonly lock?: never; readonly group?: never }
  | { readonly group: string; readonly lock?: never; readonly record?: never };

/** Drops a watch; calling it again does nothing. */
export type Unwatch = () => void;

/** Member data as stored: a plain JSON object of at most `MAX_MEMBER_DATA_BYTES`; `InvalidOptionError` otherwise. */
export function resolveMemberData(data: unknown): string {
  const json = data !== null && typeof data === 'object' && !Array.isArray(data) ? jsonOrUndefined(data) : undefined;
  if (json === undefined || Buffer.byteLength(json, 'utf8') > MAX_MEMBER_DATA_BYTES) {
    throw new InvalidOptionError('data', data, `a plain JSON object of at most ${MAX_MEMBER_DATA_BYTES} bytes`);
  }
  return json;
}

function jsonOrUndefined(data: object): string | undefined {
  try {
    return JSON.stringify(data);
  } catch {
    return undefined; // a cycle, a BigInt: not JSON
  }
}

/** Checks a watch target's shape: exactly one of `lock`, `record`, `group` (the backend checks the name). */
export function resolveWatchTarget(target: unknown): { kind: 'lock' | 'record' | 'group'; name: unknown } {
  const keys = target !== null && typeof target === 'object' ? Object.keys(target) : [];
  const kind = keys.length === 1 ? keys[0] : undefined;
  if (kind !== 'lock' && kind !== 'record' && kind !== 'group')
    throw new InvalidOptionError('target', target, 'one of { lock: name }, { record: name }, { group: name }');
  return { kind, name: (target as Record<string, unknown>)[kind] };
}

/** Members in id order (by UTF-16 code units), as every listing of a group is. */
export function byMemberId(a: GroupMember, b: GroupMember): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
