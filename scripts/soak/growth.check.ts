/**
 * Growth detection over checkpoints. A leak shows as a value that rises with the cycles run;
 * noise (GC timing, a timer due at the checkpoint) shows as scatter around a flat line.
 * The slope is Theil–Sen's (the median of the slopes between every two checkpoints), so
 * one odd checkpoint cannot make or hide a trend. A metric fails only when both its slope
 * and the rise from the first third of the window to its last third (medians) pass their
 * limits: a leak does both; a lone spike does neither.
 */
export interface Checkpoint {
  /** Cycles done when it was taken. */
  readonly cycles: number;
  readonly values: Readonly<Record<string, number>>;
}

export interface GrowthRule {
  readonly metric: string;
  /** Largest slope taken as flat, in the metric's unit per cycle. */
  readonly maxPerCycle: number;
  /** Largest rise, last third's median minus first third's, taken as noise. */
  readonly maxRise: number;
}

export interface GrowthVerdict {
  readonly metric: string;
  readonly perCycle: number;
  readonly rise: number;
  readonly first: number;
  readonly last: number;
  readonly failed: boolean;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Theil–Sen slope of `y` over `x`. */
export function theilSen(points: ReadonlyArray<{ x: number; y: number }>): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const dx = points[j].x - points[i].x;
      if (dx !== 0) slopes.push((points[j].y - points[i].y) / dx);
    }
  }
  return slopes.length ? median(slopes) : 0;
}

/** Each rule's verdict over the checkpoints after the first `warmup` ones (the initial one included in them). */
export function checkGrowth(
  checkpoints: readonly Checkpoint[],
  rules: readonly GrowthRule[],
  warmup: number,
): GrowthVerdict[] {
  const window = checkpoints.slice(warmup);
  if (window.length < 6) throw new Error(`${window.length} checkpoints after warm-up: too few to see a trend`);
  const third = Math.floor(window.length / 3);
  return rules.map(({ metric, maxPerCycle, maxRise }) => {
    const points = window.map((c) => ({ x: c.cycles, y: c.values[metric] }));
    if (points.some((p) => !Number.isFinite(p.y))) throw new Error(`checkpoint without a value for ${metric}`);
    const perCycle = theilSen(points);
    const first = median(points.slice(0, third).map((p) => p.y));
    const last = median(points.slice(-third).map((p) => p.y));
    const rise = last - first;
    return { metric, perCycle, rise, first, last, failed: perCycle > maxPerCycle && rise > maxRise };
  });
}
