import { checkGrowth, theilSen, type Checkpoint } from '../../scripts/soak/growth.check';
import { GROWTH_RULES } from '../../scripts/soak/growth.limits';

/** 13 checkpoints over 10,000 cycles, as `npm run soak -- --short` takes them. */
const CYCLES = Array.from({ length: 13 }, (_, i) => Math.round((10_000 * i) / 12));
const WARMUP = 4; // the initial checkpoint and 3 warm-up ones
const series = (values: Record<string, (cycles: number, i: number) => number>): Checkpoint[] =>
  CYCLES.map((cycles, i) => ({
    cycles,
    values: Object.fromEntries(Object.entries(values).map(([k, f]) => [k, f(cycles, i)])),
  }));
/** Deterministic scatter in [-1, 1]. */
const jitter = (i: number): number => Math.sin(i * 12.9898) % 1;
const failing = (checkpoints: Checkpoint[]): string[] =>
  checkGrowth(checkpoints, GROWTH_RULES, WARMUP)
    .filter((v) => v.failed)
    .map((v) => v.metric);

const idle = {
  heapUsed: (_: number, i: number) => 14.6e6 + 40e3 * jitter(i), // ±40 KB, as measured
  heapObjects: (_: number, i: number) => 11.0e6 + 30e3 * jitter(i),
  liveObjects: (_: number, i: number) => 19_125 + Math.round(2 * jitter(i)),
  external: () => 2_184_379,
  serverWatches: () => 0,
  timers: () => 8,
  handles: () => 15,
  watchers: () => 0,
  rawWatchPaths: () => 0,
  heldOrWaiting: () => 0,
  pendingRequests: () => 0,
  listeners: (_: number, i: number) => 52 + (i === 9 ? 2 : 0),
};

describe('the soak growth check', () => {
  it('finds the Theil–Sen slope, whatever one outlier does', () => {
    const points = [0, 1, 2, 3, 4, 5, 6].map((x) => ({ x, y: 3 * x }));
    points[4] = { x: 4, y: 1000 };
    expect(theilSen(points)).toBe(3);
  });

  it('passes a run whose figures only scatter, with warm-up growth and one spike', () => {
    const checkpoints = series({
      ...idle,
      heapUsed: (c, i) => (i < WARMUP ? 12.5e6 + 600 * c : 14.6e6) + (i === 8 ? 250e3 : 0),
    });
    expect(failing(checkpoints)).toEqual([]);
  });

  it('fails on one small object kept per cycle (+1 live object and ~46 bytes, as measured in the soak)', () => {
    const checkpoints = series({
      ...idle,
      liveObjects: (c, i) => idle.liveObjects(c, i) + c,
      heapObjects: (c, i) => idle.heapObjects(c, i) + 46 * c,
    });
    expect(failing(checkpoints)).toEqual(['heapObjects', 'liveObjects']);
  });

  it('fails on one small object per cycle by its count alone, whatever the bytes show', () => {
    expect(failing(series({ ...idle, liveObjects: (c, i) => idle.liveObjects(c, i) + c }))).toEqual(['liveObjects']);
  });

  it('fails on one timer and one listener left per reconnect (a drop every 100 cycles)', () => {
    const perDrop = (c: number): number => Math.floor(c / 100);
    const checkpoints = series({
      ...idle,
      timers: (c) => 8 + perDrop(c),
      handles: (c) => 15 + perDrop(c),
      listeners: (c) => 52 + perDrop(c),
    });
    expect(failing(checkpoints)).toEqual(['timers', 'handles', 'listeners']);
  });

  it('fails on one server watch left per 200 cycles', () => {
    expect(failing(series({ ...idle, serverWatches: (c) => Math.floor(c / 200) }))).toEqual(['serverWatches']);
  });
});
