import type { BenchResults } from '../bench.results.js';
import type { ClientCpuRow } from '../support/client-cpu.js';
import { IMPLS, OTHER_IMPLS, type ImplName } from '../workers/impl.protocol.js';
import { methodNotes } from './method.notes.js';
import { format } from './number.format.js';

type Style = 'text' | 'markdown';

const IMPL_LABEL: Record<ImplName, string> = { ours: 'ours', raw: 'raw', kazoo: 'kazoo', curator: 'curator' };

/** Rows as an aligned plain-text table or a GitHub markdown table. */
export function table(
  headers: readonly string[],
  rows: readonly string[][],
  style: Style,
  rightAligned: readonly boolean[] = [],
): string {
  if (style === 'markdown') {
    const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
    const rule = headers.map((_, i) => (rightAligned[i] ? '---:' : '---'));
    return [line(headers), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n');
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const pad = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (rightAligned[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [pad(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(pad)].join('\n');
}

/** The main table: each metric's median per implementation and ours ÷ the others. */
export function metricsTable(results: BenchResults, style: Style): string {
  const rows = results.metrics.map((m) => [
    String(m.scenario),
    m.label,
    m.unit,
    ...IMPLS.map((impl) => format(m.median[impl])),
    ...OTHER_IMPLS.map((other) => ratioCell(m.ratio[other], m.ratioRange[other])),
  ]);
  const headers = [
    '#',
    'metric (median of rounds)',
    'unit',
    ...IMPLS.map((i) => IMPL_LABEL[i]),
    ...OTHER_IMPLS.map((i) => `ours/${IMPL_LABEL[i]} [range]`),
  ];
  return table(
    headers,
    rows,
    style,
    headers.map((_, i) => i >= 3),
  );
}

/** The median per-round ratio, with the lowest and highest round's in brackets. */
export function ratioCell(value: number | undefined, range?: [number, number]): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return range && range[0] !== range[1]
    ? `${format(value)}× [${format(range[0])}–${format(range[1])}]`
    : `${format(value)}×`;
}

export function targetsTable(results: BenchResults, style: Style): string {
  const rows = results.targets.map((t) => [
    t.id,
    t.label,
    t.measured,
    t.threshold,
    t.pass === null
      ? t.note === 'no threshold'
        ? 'reported'
        : `n/a${t.note ? ` (${t.note})` : ''}`
      : t.pass
        ? 'PASS'
        : 'FAIL',
  ]);
  return table(['target', 'what', 'measured', 'needed', 'result'], rows, style);
}

/** Where round trips go: requests by op name (and watch notifications) per unit of work. */
export function roundTripsTable(results: BenchResults, style: Style): string {
  const rows = results.roundTrips.map((r) => [
    String(r.scenario),
    r.per,
    r.impl,
    Object.entries(r.byOp)
      .filter(([op, n]) => op !== 'notification' && n > 0)
      .map(([op, n]) => `${op} ${format(n)}`)
      .join(', ') || '(none)',
    format(r.requests),
    r.notifications === null ? 'n/c' : format(r.notifications),
  ]);
  return table(['#', 'per', 'impl', 'requests by op', 'requests', 'notifications'], rows, style, [
    false,
    false,
    false,
    false,
    true,
    true,
  ]);
}

/**
 * How busy each implementation's client processes were while a scenario ran (share of one
 * core), or (`of: 'server'`) the ZooKeeper servers while that implementation ran.
 */
export function cpuShareTable(results: BenchResults, style: Style, of: 'busy' | 'server' = 'busy'): string {
  const share = (row: ClientCpuRow, impl: ImplName): number | undefined => row[of]?.[impl];
  const impls = (['ours', 'raw', 'kazoo', 'curator'] as const).filter((impl) =>
    (results.clientCpu ?? []).some((row) => share(row, impl) !== undefined),
  );
  const rows = (results.clientCpu ?? []).map((row) => [
    String(row.scenario),
    row.title,
    ...impls.map((impl) => {
      const value = share(row, impl);
      return value === undefined ? '–' : `${format(value * 100)}%`;
    }),
  ]);
  return table(['#', 'scenario', ...impls], rows, style, [false, false, ...impls.map(() => true)]);
}

/** One-paragraph description of the run. */
export function runSummary(results: BenchResults): string[] {
  const { meta } = results;
  const server = meta.server.external
    ? `existing server (ZK_CONNECT), ZooKeeper ${meta.server.version}, forceSync unknown`
    : `own ${meta.server.topology ?? 'standalone server'}: ZooKeeper ${meta.server.version}, forceSync=${meta.server.forceSync ? 'yes' : 'no'}, tickTime ${meta.server.tickTime} ms, JVM ${meta.server.jvmArgs?.join(' ')}`;
  const source = meta.source.commit
    ? `lib/ at commit ${meta.source.commit}${meta.source.libChangedFiles ? ` plus ${meta.source.libChangedFiles} uncommitted file(s)` : ''}`
    : 'lib/ as checked out';
  return [
    `${meta.startedAt}: ${meta.rounds} measured round(s) after ${meta.warmupRounds} warm-up round(s)${meta.quick ? ', --quick counts (not a measurement)' : ''}, scenarios ${meta.scenarios.join(',')}; ${meta.runtimeSec.toFixed(0)} s`,
    `server: ${server}`,
    `clients: ${IMPLS.filter((i) => meta.versions[i])
      .map((i) => `${i} = ${meta.versions[i]}`)
      .join('; ')}; Node ${meta.versions.node}; ${source}`,
    `machine: ${meta.machine.cpus} × ${meta.machine.cpuModel}; load average ${meta.machine.loadavgStart.map((l) => l.toFixed(2)).join(' ')} at start, ${meta.machine.loadavgEnd.map((l) => l.toFixed(2)).join(' ')} at end`,
    `method: ${meta.freshWorkers ? 'each scenario runs its rounds in worker processes started and warmed for it alone' : 'one set of worker processes runs every scenario, round after round'}; in each round every implementation runs the scenario (scenarios 1, 3 and 7 in several turns), in a fresh random order each time; figures are medians over rounds, ratios the median of per-round ours ÷ other [lowest–highest round]; queued-before-release checked with ${meta.queueProbe}`,
  ];
}

/** Everything, for the console. */
export function consoleReport(results: BenchResults): string {
  const parts = [
    ...runSummary(results),
    '',
    metricsTable(results, 'text'),
    '',
    'Targets',
    targetsTable(results, 'text'),
    '',
    'Where the round trips go (per unit of work; heartbeats left out; n/c = not countable)',
    roundTripsTable(results, 'text'),
  ];
  if (results.notes.length) parts.push('', 'Notes', ...results.notes.map((n) => `- ${n}`));
  if (results.problems.length) parts.push('', 'PROBLEMS', ...results.problems.map((p) => `- ${p}`));
  const ensemble = results.ensemble;
  if (ensemble) {
    parts.push(
      '',
      `ON A ${ENSEMBLE_TITLE.toUpperCase()}`,
      ...runSummary(ensemble),
      '',
      metricsTable(ensemble, 'text'),
      '',
      'Targets (ensemble)',
      targetsTable(ensemble, 'text'),
    );
    parts.push('', 'Where the round trips go (ensemble)', roundTripsTable(ensemble, 'text'));
    if (ensemble.notes.length) parts.push('', 'Notes (ensemble)', ...ensemble.notes.map((n) => `- ${n}`));
    if (ensemble.problems.length) parts.push('', 'PROBLEMS (ensemble)', ...ensemble.problems.map((p) => `- ${p}`));
  }
  return parts.join('\n');
}

const ENSEMBLE_TITLE = '3-server ensemble';

/** The ensemble pass as a section of the markdown page: bold labels, not headings (the README shifts headings down a level). */
function ensembleSection(ensemble: BenchResults): string[] {
  const parts = [
    `## On a ${ENSEMBLE_TITLE}`,
    '',
    'Scenarios 1 and 2 again, on three ZooKeeper servers on loopback (same flags as the standalone server), every session of every implementation on the same follower.',
    '',
    ...runSummary(ensemble).map((line) => `- ${line}`),
    '',
    metricsTable(ensemble, 'markdown'),
    '',
    '**Targets on the ensemble**',
    '',
    targetsTable(ensemble, 'markdown'),
    '',
    '**Where the round trips go on the ensemble**',
    '',
    roundTripsTable(ensemble, 'markdown'),
    '',
  ];
  if (ensemble.notes.length) parts.push('**Notes on the ensemble**', '', ...ensemble.notes.map((n) => `- ${n}`), '');
  if (ensemble.problems.length)
    parts.push('**Problems on the ensemble**', '', ...ensemble.problems.map((p) => `- ${p}`), '');
  return parts;
}

/** The markdown page the README includes (docs/bench/latest.md). */
export function markdownReport(results: BenchResults, chartFile: string | undefined): string {
  const { meta } = results;
  const mode =
    meta.server.forceSync === false
      ? 'forceSync=no (client-bound)'
      : meta.server.forceSync
        ? 'forceSync=yes (as in production)'
        : 'existing server';
  const parts = [
    `# Benchmark: ${mode}`,
    '',
    'Generated by `npm run bench' +
      (meta.server.forceSync === false ? ' -- --no-sync' : '') +
      '`; do not edit by hand.',
    '',
    ...runSummary(results).map((line) => `- ${line}`),
    '',
    metricsTable(results, 'markdown'),
    '',
    ...(chartFile ? [`![Benchmark chart](${chartFile})`, ''] : []),
    '## Targets',
    '',
    targetsTable(results, 'markdown'),
    '',
    '## Where the round trips go',
    '',
    "Per unit of work, medians over rounds, heartbeats left out; n/c: not countable (Kazoo's notifications outside scenarios 7 and 8).",
    '',
    roundTripsTable(results, 'markdown'),
    '',
    ...(results.clientCpu?.length
      ? [
          '## Client CPU',
          '',
          "CPU time of each implementation's worker processes (every thread: the JVM's I/O, GC and JIT threads, Kazoo's threads) ÷ wall time while the scenario ran, median over rounds: 100% is one core busy the whole time. The machine has " +
            `${results.meta.machine.cpus} cores, shared with the ZooKeeper server.`,
          '',
          cpuShareTable(results, 'markdown'),
          '',
          ...(results.clientCpu.some((row) => row.server)
            ? [
                "The ZooKeeper server processes' CPU time (every thread, from /proc in 10 ms ticks) ÷ wall time while each implementation ran the scenario, median over rounds: the other side of each round trip.",
                '',
                cpuShareTable(results, 'markdown', 'server'),
                '',
              ]
            : []),
        ]
      : []),
  ];
  if (results.notes.length) parts.push('## Notes', '', ...results.notes.map((n) => `- ${n}`), '');
  if (results.problems.length) parts.push('## Problems', '', ...results.problems.map((p) => `- ${p}`), '');
  if (results.ensemble) parts.push(...ensembleSection(results.ensemble));
  parts.push(
    '## How each figure is measured',
    '',
    ...methodNotes(results.counts, results.meta.serverWarmupMs, results.meta.freshWorkers).map((n) => `- ${n}`),
    '',
  );
  return parts.join('\n');
}
