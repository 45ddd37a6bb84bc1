import { newAttemptGuid } from './node-format.js';

/**
 * A kept hold's marker: a node in the lock's own directory that keeps the lock counted as
 * held by every acquirer after its holder released it, until `holdAtLeastMs` after the
 * job's function started (ShedLock's `lock_until`). Its data says how long the hold lasts
 * past the node's creation (`holdMs`), so any acquirer can judge its end on ZooKeeper's own
 * clock (the node's `ctime` plus `holdMs`), never on another host's.
 *
 * The holder creates it before deleting its lock node, EPHEMERAL in its own session, and
 * deletes it once the hold ends by its own monotonic clock. Its name sorts before every
 * sequence number in Curator's order (the part after the last `lock-`, or after `__WRIT__`,
 * starts with `!`) and in Kazoo's (`__lock__-0000000000`), so their waiters queue behind it
 * as behind a writer, and take the lock once it goes; being ephemeral, it goes at the
 * latest with its holder's session, so it can never block them for good:
 * `kept-hold-<32 hex>-lock-!__WRIT__!__lock__-0000000000`.
 *
 * A holder that closes during a hold leaves a PERSISTENT marker instead, for the time left:
 * `kept-hold-<32 hex>`, a name Curator and Kazoo ignore (nothing would delete it for them);
 * our acquirers delete it once past its end.
 *
 * Our acquirers find a marker in the children read they make anyway: nothing is read or
 * written when no hold exists.
 */
export const KEPT_HOLD_PREFIX = 'kept-hold-';
const KEPT_HOLD_SUFFIX = '-lock-!__WRIT__!__lock__-0000000000';
const KEPT_HOLD_NODE = /^kept-hold-[0-9a-f]{32}(-lock-!__WRIT__!__lock__-0000000000)?$/;

/** What the marker's data says (the JSON written into it), for people and other clients' `contenders()`. */
export const KEPT_HOLD_KIND = 'nestjs-zk-lock/kept-hold';

/**
 * A fresh marker's name: a guid of its own, so that a late delete never takes a newer
 * hold's; `persistent` for the one a closing holder leaves, which other clients ignore.
 */
export function newKeptHoldNode(persistent = false): string {
  return `${KEPT_HOLD_PREFIX}${newAttemptGuid()}${persistent ? '' : KEPT_HOLD_SUFFIX}`;
}

/** Whether a child of a lock's directory is a kept hold's marker (of either kind). */
export function isKeptHoldNode(child: string): boolean {
  return child.startsWith(KEPT_HOLD_PREFIX) && KEPT_HOLD_NODE.test(child);
}

/** The first kept hold's marker among `children`, if any. */
export function keptHoldIn(children: readonly string[]): string | undefined {
  return children.find(isKeptHoldNode);
}

/** The marker's data: how long the hold lasts past its creation, and who keeps it. */
export function keptHoldData(holdMs: number, by: string): Buffer {
  return Buffer.from(JSON.stringify({ kind: KEPT_HOLD_KIND, holdMs: Math.ceil(holdMs), by }), 'utf8');
}

/** The hold's length a marker's data gives, or `null` when it gives none (the hold lasts until the marker goes). */
export function keptHoldMsOf(data: Buffer): number | null {
  try {
    const { kind, holdMs } = JSON.parse(data.toString('utf8')) as { kind?: unknown; holdMs?: unknown };
    return kind === KEPT_HOLD_KIND && typeof holdMs === 'number' && Number.isFinite(holdMs) && holdMs >= 0
      ? holdMs
      : null;
  } catch {
    return null;
  }
}
