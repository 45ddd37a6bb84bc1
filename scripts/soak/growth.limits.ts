import type { GrowthRule } from './growth.check.js';

/**
 * How much each metric may move over the window after warm-up before it counts as growth.
 * A metric fails when its slope passes `maxPerCycle` and its rise passes `maxRise` (see
 * growth.check.ts). Measured on a 2-core machine, 4 clients × 3 workers, no leak:
 *
 * - One small object kept per cycle (`{ cycle }` pushed on an array, tried in the driver)
 *   showed as +1 live object and +46 heapObjects bytes (+57 heapUsed) per cycle.
 * - liveObjects: +0 to +2 per 10,000 cycles once the driver's own records are left out.
 *   Limit 2 per 1,000 cycles: one object leaked per reconnect (a drop every 100–200 cycles)
 *   is 5–10 per 1,000 cycles, one per cycle 1,000.
 * - heapObjects (no compiled code): 0–6 bytes/cycle after warm-up, single checkpoints up to
 *   ~200 KB off (Theil–Sen and the thirds' medians ignore those). Limit 12 bytes/cycle.
 * - heapUsed still holds what the JIT compiles: 10–20 bytes/cycle in a 10,000-cycle run,
 *   1–10 after 20,000 cycles. Limit 40: it catches bigger leaks (a few objects or a
 *   buffer per cycle); one small object per cycle is left to the two above.
 * - Counts (watches, timers, handles, listeners…): the same value at every idle checkpoint.
 *   Limit 1 per 1,000 cycles and a rise of 3: one per reconnect or per cycle fails.
 */
export const GROWTH_RULES: readonly GrowthRule[] = [
  { metric: 'heapUsed', maxPerCycle: 40, maxRise: 256 * 1024 },
  { metric: 'heapObjects', maxPerCycle: 12, maxRise: 64 * 1024 },
  { metric: 'liveObjects', maxPerCycle: 0.002, maxRise: 10 },
  { metric: 'external', maxPerCycle: 12, maxRise: 64 * 1024 },
  ...[
    'serverWatches',
    'timers',
    'handles',
    'watchers',
    'rawWatchPaths',
    'heldOrWaiting',
    'pendingRequests',
    'listeners',
  ].map((metric) => ({ metric, maxPerCycle: 0.001, maxRise: 3 })),
];
