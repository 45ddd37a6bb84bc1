/**
 * The speed figures of the peers pass, from the cycles the workers recorded (pure, so the
 * arithmetic is tested on its own: test/bench/peer-speed-metrics.spec.ts).
 */
import { nsBetween, percentile, median } from '../../support/sample-stats.js';
import type { CycleRecord } from '../peer-worker.protocol.js';

/** Acquire + release cycles per second of one client alone: its calls back to back. */
export function cyclesPerSecond(cycles: readonly CycleRecord[]): number {
  if (cycles.length === 0) return Number.NaN;
  return cycles.length / (nsBetween(cycles[0].requestedAt, cycles[cycles.length - 1].doneAt) / 1e9);
}

/** What one handoff pair gave: a sample in µs, or why it measured no handoff. */
export type Handoff = { readonly us: number } | { readonly missed: string };

/**
 * One handoff: the holder's cycle and the waiter's, the waiter having asked while the
 * holder held. The time from the holder's release (its body's end: `releasingAt`) to the
 * waiter's grant, in µs; when the order was not that (the waiter was granted first, or
 * asked before the holder's grant or at or after its release), the sample says nothing of
 * a handoff, and the answer says which.
 */
export function handoffUs(holder: CycleRecord, waiter: CycleRecord): Handoff {
  const ms = (from: string, to: string): string => `${(nsBetween(from, to) / 1e6).toFixed(1)} ms`;
  const asked = BigInt(waiter.requestedAt);
  if (BigInt(waiter.grantedAt) < BigInt(holder.grantedAt))
    return { missed: `the waiter was granted ${ms(waiter.grantedAt, holder.grantedAt)} before the holder` };
  if (asked < BigInt(holder.grantedAt))
    return { missed: `the waiter asked ${ms(waiter.requestedAt, holder.grantedAt)} before the holder's grant` };
  if (asked >= BigInt(holder.releasingAt))
    return { missed: `the waiter asked ${ms(holder.releasingAt, waiter.requestedAt)} after the holder's release` };
  return { us: nsBetween(holder.releasingAt, waiter.grantedAt) / 1e3 };
}

export interface Spread {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
}

export function spread(values: readonly number[]): Spread {
  return { n: values.length, p50: median(values), p99: percentile(values, 99) };
}

/**
 * Grants per second of contenders looping on one key, each cycle counted when its grant
 * fell within [from, from + durationMs).
 */
export function grantsPerSecond(
  perWorker: ReadonlyArray<readonly CycleRecord[]>,
  from: string,
  durationMs: number,
): number {
  const start = BigInt(from);
  const end = start + BigInt(Math.round(durationMs * 1e6));
  let grants = 0;
  for (const cycles of perWorker)
    for (const cycle of cycles) {
      const at = BigInt(cycle.grantedAt);
      if (at >= start && at < end) grants++;
    }
  return grants / (durationMs / 1e3);
}

/**
 * Holds of different workers that intersect: [grantedAt, releasingAt) of one against
 * another's. A lock is only measured while it keeps this at zero; a speed figure of a lock
 * that let two holders in is not a figure.
 */
export function overlappingHolds(perWorker: ReadonlyArray<readonly CycleRecord[]>): number {
  const holds = perWorker
    .flatMap((cycles, worker) => cycles.map((c) => ({ worker, from: BigInt(c.grantedAt), to: BigInt(c.releasingAt) })))
    .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  let overlaps = 0;
  let last: { worker: number; to: bigint } | undefined;
  for (const hold of holds) {
    if (last && hold.from < last.to && hold.worker !== last.worker) overlaps++;
    if (!last || hold.to > last.to) last = hold;
  }
  return overlaps;
}
