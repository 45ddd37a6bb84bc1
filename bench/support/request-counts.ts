import type { Counts } from '../workers/impl.protocol.js';

/** Not a request of any lock operation: the library's liveness ping, sent on a timer. */
export const HEARTBEAT = 'heartbeat';
/** A watch event received, not a request sent. */
export const NOTIFICATION = 'notification';

/** `after - before`, per key, dropping zeros. */
export function countsDelta(before: Counts, after: Counts): Counts {
  const delta: Counts = {};
  for (const [op, n] of Object.entries(after)) {
    const d = n - (before[op] ?? 0);
    if (d !== 0) delta[op] = d;
  }
  return delta;
}

export function addCounts(into: Counts, more: Counts): Counts {
  for (const [op, n] of Object.entries(more)) into[op] = (into[op] ?? 0) + n;
  return into;
}

/** Requests of lock operations: everything but notifications and heartbeats. */
export function requestsOf(counts: Counts): number {
  let sum = 0;
  for (const [op, n] of Object.entries(counts)) if (op !== NOTIFICATION && op !== HEARTBEAT) sum += n;
  return sum;
}

export function notificationsOf(counts: Counts): number {
  return counts[NOTIFICATION] ?? 0;
}

/** Each count divided by `units` (per cycle, per handoff…), heartbeats left out. */
export function perUnit(counts: Counts, units: number): Counts {
  const out: Counts = {};
  for (const [op, n] of Object.entries(counts)) if (op !== HEARTBEAT) out[op] = n / units;
  return out;
}

/** Per-op medians over several rounds' per-unit counts (an op missing in a round counts 0). */
export function medianCounts(rounds: readonly Counts[], median: (values: number[]) => number): Counts {
  const ops = new Set(rounds.flatMap((c) => Object.keys(c)));
  const out: Counts = {};
  for (const op of [...ops].sort()) out[op] = median(rounds.map((c) => c[op] ?? 0));
  return out;
}
