import { currentToken, listedParts, partLockPrefix } from '../core/partition/part-owners.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { age, json, membersText, table } from './output.js';

/**
 * `partitions <group>`: a Partitioner group's members, and each part lock with its owner
 * (the member whose client holds it), the ownership's fencing token (from the record the
 * owner wrote at the grant, shown only when it names the node that holds now: empty
 * while the owner has not written it yet, or for a holder that is no Partitioner), the
 * holder's identity and session, since when, and how many wait for it (a move under way). Parts nobody has locked yet are not listed: the
 * part count lives in the members' options, not in ZooKeeper.
 */
export async function partitions(
  backend: ZkLockBackend,
  group: string,
  asJson: boolean,
  now = Date.now(),
): Promise<{ readonly out: string; readonly code: number }> {
  const prefix = partLockPrefix(group);
  const [members, listing] = await Promise.all([backend.groupMembers(group), backend.locks(prefix)]);
  const listed = listedParts(listing, prefix, members);
  const records = await Promise.all(listed.map(({ lock }) => backend.readRecord(lock.name)));
  const parts = listed
    .map((part, i) => ({ part, token: currentToken(part, records[i]?.data) }))
    .map(({ part: { key, lock, owner }, token }) => ({
      part: key,
      owner: owner?.id ?? null,
      token,
      identity: lock.holders[0]?.identity ?? null,
      sessionId: lock.holders[0]?.sessionId ?? null,
      since: lock.holders[0]?.since ?? null,
      waiters: lock.waiters.length,
    }))
    .sort((a, b) => byPart(a.part, b.part));
  if (asJson) return { out: json({ group, members, parts }), code: 0 };
  const rows = parts.map((p) => [
    p.part,
    p.owner ?? (p.identity === null ? '(none)' : '(not a member)'),
    p.token ?? '',
    p.identity ?? '',
    p.since ? age(p.since, now) : '',
    p.sessionId ?? '',
    String(p.waiters),
  ]);
  const lines = [membersText(group, members, now), ''];
  if (parts.length === 0) lines.push(`No part of group "${group}" is locked.`);
  else lines.push(...table([['part', 'owner', 'token', 'identity', 'age', 'session', 'waiting'], ...rows]));
  return { out: lines.join('\n'), code: 0 };
}

/** Numeric parts in number order, keys by code units. */
function byPart(a: string, b: string): number {
  const [x, y] = [Number(a), Number(b)];
  if (Number.isInteger(x) && Number.isInteger(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}
