import { encodeGroupName } from '../naming/group-name.js';
import type { GroupMember } from '../port/group.js';
import type { LockListing, ListedLock, RecordData } from '../port/lock-backend.js';

/** The prefix of every part lock of `group`, and of no other lock: `partition:<group, encoded>/`. */
export function partLockPrefix(group: string): string {
  return `partition:${encodeGroupName('group', group)}/`;
}

/** One part lock as listed, with the member that holds it (if a member does). */
export interface ListedPart {
  readonly key: string;
  readonly lock: LockListing;
  readonly owner: GroupMember | undefined;
}

/**
 * The part locks of a listing (`locks(prefix)`), each with its owner: the member whose
 * backend holds the lock, by the identity its node carries and, where both tell one, the
 * same session (two members whose backends share an identity are told apart by session).
 */
export function listedParts(
  listing: readonly ListedLock[],
  prefix: string,
  members: readonly GroupMember[],
): ListedPart[] {
  return listing.flatMap((lock): ListedPart[] => {
    if (lock.kind !== 'lock' || !lock.name.startsWith(prefix)) return [];
    const holder = lock.holders[0];
    const owner = holder && members.find((member) => holds(member, holder));
    return [{ key: lock.name.slice(prefix.length), lock, owner }];
  });
}

function holds(member: GroupMember, holder: { identity: string | null; sessionId?: string }): boolean {
  if (member.data.identity !== holder.identity) return false;
  return member.sessionId === undefined || holder.sessionId === undefined || member.sessionId === holder.sessionId;
}

/**
 * What a part's owner publishes of its ownership, in the record named as the part's lock
 * (`partition:<group>/<part>`, see `LockBackend.writeRecord`): written once per grant, with
 * `whileHolding` the part lock, so a record naming a node was written while that node held
 * the part. Nothing is written while the ownership lasts.
 */
export interface PartRecord {
  /** The owner's lock node, as `contenders()` names it. */
  readonly node: string;
  /** The part lock's fencing token, in decimal: ZooKeeper's read at the grant, not recoverable later. */
  readonly token: string;
  /** The owner's member id. */
  readonly member: string;
}

/**
 * The fencing token of the ownership that holds `part` now, from its record: only when the
 * record names the lock's current holder node, since a record left by an earlier owner
 * (or a late write of it) names another node. `null` otherwise.
 */
export function currentToken(part: ListedPart, record: RecordData | undefined): string | null {
  const holder = part.lock.holders[0];
  if (!holder || !record || record.node !== holder.node) return null;
  return typeof record.token === 'string' && /^\d+$/.test(record.token) ? record.token : null;
}
