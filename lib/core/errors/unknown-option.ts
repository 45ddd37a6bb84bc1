import { InvalidOptionError } from './errors.js';

/**
 * Refuses an options object with a key `owner` does not know, naming the key, every known
 * one, and the closest (`sessionTimeout` → `sessionTimeoutMs`): a typo would otherwise do
 * nothing at all. `hint` may explain a key that is known elsewhere (e.g. `mode` on a group).
 */
export function assertKnownOptions(
  options: object,
  known: readonly string[],
  owner: string,
  hint?: (key: string) => string | undefined,
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const value = (options as Record<string, unknown>)[key];
    throw new InvalidOptionError(key, value, hint?.(key) ?? unknownOptionMessage(key, known, owner));
  }
}

export function unknownOptionMessage(key: string, known: readonly string[], owner: string): string {
  const closest = closestOption(key, known);
  const advice = closest ? `did you mean ${JSON.stringify(closest)}?` : 'check the spelling';
  return `an option ${owner} knows: ${listOf(known)} (it has no option ${JSON.stringify(key)}; ${advice})`;
}

/** The known option nearest to `key` by edit distance (case-insensitive), if it is near enough to be a slip. */
export function closestOption(key: string, known: readonly string[]): string | undefined {
  let best: { option: string; distance: number } | undefined;
  for (const option of known) {
    const distance = editDistance(key.toLowerCase(), option.toLowerCase());
    if (!best || distance < best.distance) best = { option, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(2, Math.floor(best.option.length / 3)) ? best.option : undefined;
}

function listOf(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** Levenshtein distance: the fewest single-character inserts, deletes and changes from `a` to `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
