import type { PartitionChange, Partitioner } from '../../lib/index';

/**
 * One thing a member did with a part, stamped with `process.hrtime.bigint()` (Linux's
 * CLOCK_MONOTONIC: one clock for every process of the machine, so events of workers and
 * of the test order across them). `drained`: its `onRevoked` for the part returned.
 */
export interface PartEvent {
  readonly member: string;
  readonly at: bigint;
  readonly kind: 'assigned' | 'revoked' | 'lost' | 'drained';
  readonly part: string;
  /** The ownership's fencing token, on `assigned`. */
  readonly token?: bigint;
}

/** The events of one change told to a member's listener, stamped now. */
export function eventsOf(
  member: string,
  change: PartitionChange,
  tokenOf: (part: number | string) => bigint | undefined,
  at = process.hrtime.bigint(),
): PartEvent[] {
  return [
    ...change.assigned.map((part) => ({
      member,
      at,
      kind: 'assigned' as const,
      part: String(part),
      token: tokenOf(part),
    })),
    ...change.revoked.map((part) => ({ member, at, kind: 'revoked' as const, part: String(part) })),
    ...change.lost.map((part) => ({ member, at, kind: 'lost' as const, part: String(part) })),
  ];
}

/**
 * Every change event of every member, and the checks over them all:
 *
 * - never two owners of a part at once: a member owns a part from `assigned` until `lost`,
 *   or until `revoked` and its drain (`drained`, when the member drains), whichever is later;
 * - each part's fencing tokens rise with each new ownership.
 */
export class PartitionChecker {
  readonly events: PartEvent[] = [];

  /** Records what `partitioner` (member `member`) is told from now on; returns the unsubscribe. */
  watch(member: string, partitioner: Partitioner): () => void {
    return partitioner.onChange((change) =>
      this.events.push(...eventsOf(member, change, (part) => partitioner.handle(part)?.fencingToken)),
    );
  }

  add(...events: PartEvent[]): void {
    this.events.push(...events);
  }

  /** Each violation found, in words (none: the history is sound). */
  violations(options: { readonly drains?: boolean } = {}): string[] {
    const found: string[] = [];
    const byPart = new Map<string, PartEvent[]>();
    for (const event of this.events) byPart.set(event.part, [...(byPart.get(event.part) ?? []), event]);
    for (const [part, events] of byPart) {
      const ordered = [...events].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      /** Who owns the part: from `assigned` until lost, or revoked and (with drains) drained. */
      const owning = new Map<string, { revoked: boolean }>();
      let lastToken: bigint | undefined;
      for (const event of ordered) {
        const { member, kind } = event;
        if (kind === 'assigned') {
          const others = [...owning.keys()].filter((other) => other !== member);
          if (others.length > 0) found.push(`part ${part} assigned to ${member} while ${others.join(', ')} owned it`);
          if (owning.has(member)) found.push(`part ${part} assigned to ${member} twice`);
          if (event.token === undefined) found.push(`part ${part} assigned to ${member} without a handle`);
          else if (lastToken !== undefined && event.token <= lastToken)
            found.push(`part ${part}: token ${event.token} of ${member} after ${lastToken}`);
          if (event.token !== undefined) lastToken = event.token;
          owning.set(member, { revoked: false });
        } else if (kind === 'lost' || (kind === 'revoked' && !options.drains) || kind === 'drained') {
          owning.delete(member);
        } else if (kind === 'revoked') {
          const state = owning.get(member);
          if (state) state.revoked = true;
        }
      }
    }
    return found;
  }

  /** The parts each member owns after every event so far. */
  owners(): Map<string, string> {
    const owners = new Map<string, string>();
    const ordered = [...this.events].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    for (const { member, kind, part } of ordered) {
      if (kind === 'assigned') owners.set(part, member);
      else if ((kind === 'revoked' || kind === 'lost') && owners.get(part) === member) owners.delete(part);
    }
    return owners;
  }
}

/** How many parts each member owns, for every member named (0 for those owning none). */
export function countsOf(owners: ReadonlyMap<string, string>, members: readonly string[]): number[] {
  return members.map((member) => [...owners.values()].filter((owner) => owner === member).length);
}

/** The parts whose owner differs between two snapshots (gained, lost or changed hands). */
export function movedParts(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const parts = new Set([...before.keys(), ...after.keys()]);
  return [...parts].filter((part) => before.get(part) !== after.get(part)).sort();
}
