import type { Counts } from '../workers/impl.protocol.js';
import type { MultiLockVariantRun } from '../workers/recipe-ops.protocol.js';
import { addCounts, countsDelta } from './request-counts.js';
import { shuffled } from './sample-stats.js';

/**
 * Runs each variant once per cycle, in a fresh order each cycle, so machine noise falls
 * on all alike; times each call alone and counts what it sent (snapshots outside the
 * timing). The first `warmup` cycles are neither timed nor counted.
 */
export async function runInTurns<V extends string>(
  variants: Record<V, () => Promise<void>>,
  cycles: number,
  warmup: number,
  snapshot: () => Counts,
): Promise<Record<V, MultiLockVariantRun>> {
  const keys = Object.keys(variants) as V[];
  const runs = Object.fromEntries(
    keys.map((key) => [key, { latenciesNs: [] as number[], counts: {} as Counts }]),
  ) as Record<V, MultiLockVariantRun>;
  for (let i = 0; i < warmup + cycles; i++) {
    for (const key of shuffled(keys)) {
      const before = snapshot();
      const start = process.hrtime.bigint();
      await variants[key]();
      const elapsedNs = Number(process.hrtime.bigint() - start);
      if (i < warmup) continue;
      runs[key].latenciesNs.push(elapsedNs);
      addCounts(runs[key].counts, countsDelta(before, snapshot()));
    }
  }
  return runs;
}
