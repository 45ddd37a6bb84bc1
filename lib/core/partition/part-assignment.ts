import { createHash } from 'node:crypto';

/**
 * Who should own which part: a pure rule, the same in every member, so that members that
 * read the same members and owners agree without a coordinator.
 *
 * Sticky and balanced, in three steps:
 *
 * 1. Quotas. With `n` parts over `m` members each gets `⌊n/m⌋`, and `n mod m` of them one
 *    more: those that own the most now, counted up to `⌊n/m⌋ + 1` (ties by id), so that
 *    nobody gives up a part only to take another back. (Counting past it would make the
 *    choice change while a member gives up what it must, and make it give up more.)
 * 2. Keep. Each member keeps the parts it owns now (in part order) up to its quota. An
 *    owner that is not a member (it left, or its holder is not one of the members read)
 *    keeps nothing.
 * 3. Hand out. Every other part, in part order, goes to the member with room left whose
 *    rendezvous score for that part (a hash of member and part) is highest.
 *
 * So owned counts differ by at most 1; a join moves only what the newcomer takes (a
 * member's count never has to rise but the newcomer's); a leave or crash moves only the
 * leaver's parts (everyone else keeps all it had). And the rule agrees with itself while
 * a move is under way: once some members took or gave up what it assigned them, the rule
 * run on that state assigns the same (see the spec).
 */
export interface AssignmentInput {
  /** Every part, in part order. */
  readonly parts: readonly string[];
  /** The members' ids (any order). */
  readonly members: readonly string[];
  /** Who owns each part now (a member id, or any other string for a holder that is no member); absent: nobody. */
  readonly owners: ReadonlyMap<string, string>;
}

/** Each member's parts, in part order: every member has an entry, with no parts maybe. */
export function assignParts({ parts, members, owners }: AssignmentInput): Map<string, string[]> {
  const ids = [...new Set(members)].sort(byCodeUnits);
  const assigned = new Map<string, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return assigned;
  const quota = quotas(parts, ids, owners);
  const free: string[] = [];
  for (const part of parts) {
    const owner = owners.get(part);
    const mine = owner === undefined ? undefined : assigned.get(owner);
    if (mine && mine.length < quota.get(owner!)!) mine.push(part);
    else free.push(part);
  }
  for (const part of free) {
    let best: string | undefined;
    let bestScore = -1;
    for (const id of ids) {
      if (assigned.get(id)!.length >= quota.get(id)!) continue;
      const score = rendezvousScore(id, part);
      if (score > bestScore) [best, bestScore] = [id, score];
    }
    assigned.get(best!)!.push(part);
  }
  const order = new Map(parts.map((part, index) => [part, index]));
  for (const list of assigned.values()) list.sort((a, b) => order.get(a)! - order.get(b)!);
  return assigned;
}

/** Each member's quota: `⌊n/m⌋`, one more for the `n mod m` that own the most now, up to that (ties by id). */
function quotas(
  parts: readonly string[],
  ids: readonly string[],
  owners: ReadonlyMap<string, string>,
): Map<string, number> {
  const owning = new Map<string, number>(ids.map((id) => [id, 0]));
  for (const part of parts) {
    const owner = owners.get(part);
    if (owner !== undefined && owning.has(owner)) owning.set(owner, owning.get(owner)! + 1);
  }
  const base = Math.floor(parts.length / ids.length);
  const extra = parts.length % ids.length;
  const counted = (id: string): number => Math.min(owning.get(id)!, base + 1);
  const ranked = [...ids].sort((a, b) => counted(b) - counted(a) || byCodeUnits(a, b));
  return new Map(ranked.map((id, rank) => [id, base + (rank < extra ? 1 : 0)]));
}

/** Highest random weight hashing: a stable pseudo-random score of `part` for `member`, 48 bits. */
export function rendezvousScore(member: string, part: string): number {
  return createHash('sha256').update(member).update('\0').update(part).digest().readUIntBE(0, 6);
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
