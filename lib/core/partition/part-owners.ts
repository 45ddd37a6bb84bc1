import { encodeGroupName } from '../naming/group-name.js';
import type { GroupMember } from '../port/group.js';
import type { LockListing, ListedLock } from '../port/lock-backend.js';

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
