import type { Checkpoint, GrowthRule, GrowthVerdict } from './growth.check.js';

const MB = 1024 * 1024;
const KB = 1024;

/** Short column headings and how each metric prints. */
const COLUMNS: ReadonlyArray<[metric: string, heading: string, format: (v: number) => string]> = [
  ['heapUsed', 'heap MB', (v) => (v / MB).toFixed(2)],
  ['heapObjects', 'objs MB', (v) => (v / MB).toFixed(2)],
  ['liveObjects', 'live objs', String],
  ['external', 'ext KB', (v) => (v / KB).toFixed(0)],
  ['serverWatches', 'srv watch', String],
  ['timers', 'timers', String],
  ['handles', 'handles', String],
  ['watchers', 'watchers', String],
  ['rawWatchPaths', 'raw paths', String],
  ['heldOrWaiting', 'held/wait', String],
  ['pendingRequests', 'pending', String],
  ['listeners', 'listeners', String],
];

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '))
    .join('\n');
}

/** One row per checkpoint: cycles, seconds, reconnects so far, then every metric. */
export function checkpointTable(
  checkpoints: ReadonlyArray<Checkpoint & { seconds: number; reconnects: number }>,
  warmup: number,
): string {
  const head = ['#', 'cycles', 's', 'reconn', ...COLUMNS.map(([, h]) => h)];
  const rows = checkpoints.map((c, i) => [
    `${i}${i < warmup ? 'w' : ''}`,
    String(c.cycles),
    c.seconds.toFixed(1),
    String(c.reconnects),
    ...COLUMNS.map(([metric, , format]) => format(c.values[metric])),
  ]);
  return table([head, ...rows]);
}

/** Per metric: first and last third of the window, the rise, the slope and its limit, the verdict. */
export function verdictTable(verdicts: readonly GrowthVerdict[], rules: readonly GrowthRule[]): string {
  const head = ['metric', 'first third', 'last third', 'rise', 'max rise', 'per 1k cycles', 'max per 1k', 'verdict'];
  const rows = verdicts.map((v) => {
    const rule = rules.find((r) => r.metric === v.metric)!;
    const n = (x: number): string => (Math.abs(x) >= 1000 ? x.toFixed(0) : Number(x.toPrecision(3)).toString());
    return [
      v.metric,
      n(v.first),
      n(v.last),
      n(v.rise),
      n(rule.maxRise),
      n(v.perCycle * 1000),
      n(rule.maxPerCycle * 1000),
      v.failed ? 'GROWS' : 'flat',
    ];
  });
  return table([head, ...rows]);
}
