/**
 * What one membership change did to the parts, from every member's reported ownership:
 * how many parts changed owner, and for how long each part had no owner. Pure: the pass
 * (partition-pass.ts) feeds it the events it collected.
 */

/** A member's ownership from time `hr` (CLOCK_MONOTONIC, ns) on: `owned` replaces what it owned before. */
export interface OwnershipEvent {
  readonly hr: bigint;
  readonly member: string;
  readonly owned: readonly number[];
}

export interface ChangeMetrics {
  /** Parts whose owner after the change is not the one before it. */
  readonly moved: number;
  /** Parts that had no owner for a while during the change (work on them stopped). */
  readonly interrupted: number;
  /** The longest time one part had no owner, in ms. */
  readonly maxGapMs: number;
  /** The time without an owner, summed over every part, in ms (part-milliseconds). */
  readonly totalGapMs: number;
  /** Moments where a part had two owners by the reports (0 for a safe partitioner; clocks are one machine's). */
  readonly overlaps: number;
}

/**
 * The metrics of a change that began at `from` with `before` (each member's ownership
 * then) and ended at `to`, once `events` (in any order) had been applied. Parts are `0…parts-1`.
 */
export function changeMetrics(
  parts: number,
  before: ReadonlyMap<string, readonly number[]>,
  events: readonly OwnershipEvent[],
  from: bigint,
  to: bigint,
): ChangeMetrics {
  const owning = new Map([...before].map(([member, owned]) => [member, new Set(owned)]));
  const ownersOf = (part: number): string[] => [...owning].filter(([, set]) => set.has(part)).map(([m]) => m);
  const initial = Array.from({ length: parts }, (_, part) => ownersOf(part).join(','));
  const gap = new Array<bigint>(parts).fill(0n);
  const longest = new Array<bigint>(parts).fill(0n);
  const since = new Array<bigint | undefined>(parts).fill(undefined);
  for (let part = 0; part < parts; part++) if (ownersOf(part).length === 0) since[part] = from;
  let overlaps = 0;
  const close = (part: number, at: bigint): void => {
    const began = since[part];
    if (began === undefined) return;
    const length = at - began;
    gap[part] += length;
    if (length > longest[part]) longest[part] = length;
    since[part] = undefined;
  };
  const inWindow = events.filter((e) => e.hr > from && e.hr <= to).sort((a, b) => (a.hr < b.hr ? -1 : 1));
  for (const event of inWindow) {
    const old = owning.get(event.member) ?? new Set<number>();
    const now = new Set(event.owned);
    owning.set(event.member, now);
    for (const part of new Set([...old, ...now])) {
      const owners = ownersOf(part).length;
      if (owners === 0) since[part] ??= event.hr;
      else close(part, event.hr);
      if (owners > 1 && !old.has(part)) overlaps++;
    }
  }
  for (let part = 0; part < parts; part++) close(part, to);
  const ms = (ns: bigint): number => Number(ns) / 1e6;
  return {
    moved: initial.filter((owner, part) => ownersOf(part).join(',') !== owner).length,
    interrupted: gap.filter((g) => g > 0n).length,
    maxGapMs: ms(longest.reduce((a, b) => (b > a ? b : a), 0n)),
    totalGapMs: ms(gap.reduce((a, b) => a + b, 0n)),
    overlaps,
  };
}
