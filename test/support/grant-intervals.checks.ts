/** One critical section under a lock, as a holder reported it. */
export interface Section {
  /** Who held: a process or client label. */
  readonly holder: string;
  readonly token: bigint;
  /** When the section began and ended, on one clock shared by every holder. */
  readonly start: bigint;
  readonly end: bigint;
}

const show = (s: Section): string => `${s.holder} token ${s.token} [${s.start}, ${s.end}]`;
const byStart = (sections: readonly Section[]): Section[] =>
  [...sections].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));

/**
 * Sections that began before an earlier one had ended: two holders at once. Each is
 * compared with the latest-ending section before it, so any overlap shows.
 */
export function overlaps(sections: readonly Section[]): string[] {
  const found: string[] = [];
  let latest: Section | undefined;
  for (const section of byStart(sections)) {
    if (latest && section.start <= latest.end) found.push(`${show(section)} began inside ${show(latest)}`);
    if (!latest || section.end > latest.end) latest = section;
  }
  return found;
}

/**
 * Places where the fencing token did not rise from one grant to the next, in the order
 * the sections began (the grant order, when no two overlap).
 */
export function tokenDrops(sections: readonly Section[]): string[] {
  const sorted = byStart(sections);
  return sorted.flatMap((section, i) =>
    i > 0 && section.token <= sorted[i - 1].token ? [`${show(section)} after ${show(sorted[i - 1])}`] : [],
  );
}
