import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { BenchResults, LatencyResults } from '../results.js';
import { SCENARIOS } from '../scenarios/all-scenarios.js';
import type { ClientCpuRow } from '../support/cpu.js';
import { IMPLS, OTHER_IMPLS, type ImplName } from '../workers/impl.protocol.js';

type Style = 'text' | 'markdown';

/** Three significant digits, no exponent, thousands grouped: 1234 → "1,234", 0.01234 → "0.0123". */
export function format(value: number | undefined | null): string {
  if (value === undefined || value === null || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(abs)));
  return value.toFixed(Math.min(digits, 4));
}

/** The median per-round ratio, with the lowest and highest round's in brackets. */
export function ratioCell(value: number | undefined, range?: [number, number]): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return range && range[0] !== range[1]
    ? `${format(value)}× [${format(range[0])}–${format(range[1])}]`
    : `${format(value)}×`;
}

/** Rows as an aligned plain-text table or a GitHub markdown table. */
function table(
  headers: readonly string[],
  rows: readonly string[][],
  style: Style,
  right: (i: number) => boolean,
): string {
  if (style === 'markdown') {
    const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
    return [line(headers), line(headers.map((_, i) => (right(i) ? '---:' : '---'))), ...rows.map(line)].join('\n');
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const pad = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (right(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [pad(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(pad)].join('\n');
}

/** Each metric's median per implementation and ours ÷ the others. */
function metricsTable(results: BenchResults, style: Style): string {
  const rows = results.metrics.map((m) => [
    String(m.scenario),
    m.label,
    m.unit,
    ...IMPLS.map((impl) => format(m.median[impl])),
    ...OTHER_IMPLS.map((other) => ratioCell(m.ratio[other], m.ratioRange[other])),
  ]);
  const headers = ['#', 'metric (median of rounds)', 'unit', ...IMPLS, ...OTHER_IMPLS.map((i) => `ours/${i} [range]`)];
  return table(headers, rows, style, (i) => i >= 3);
}

function targetsTable(results: BenchResults, style: Style): string {
  const result = (t: BenchResults['targets'][number]): string => {
    if (t.pass !== null) return t.pass ? 'PASS' : 'FAIL';
    return t.note === 'no threshold' ? 'reported' : `n/a${t.note ? ` (${t.note})` : ''}`;
  };
  const rows = results.targets.map((t) => [t.id, t.label, t.measured, t.threshold, result(t)]);
  return table(['target', 'what', 'measured', 'needed', 'result'], rows, style, () => false);
}

/** Requests by op name (and watch notifications) per unit of work. */
function roundTripsTable(results: BenchResults, style: Style): string {
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
  return table(['#', 'per', 'impl', 'requests by op', 'requests', 'notifications'], rows, style, (i) => i >= 4);
}

/** Share of one core: each implementation's client processes (`busy`), or the servers while it ran. */
function cpuTable(results: BenchResults, style: Style, of: 'busy' | 'server'): string {
  const cpu = results.clientCpu ?? [];
  const share = (row: ClientCpuRow, impl: ImplName): number | undefined => row[of]?.[impl];
  const impls = IMPLS.filter((impl) => cpu.some((row) => share(row, impl) !== undefined));
  const rows = cpu.map((row) => [
    String(row.scenario),
    row.title,
    ...impls.map((impl) => (share(row, impl) === undefined ? '–' : `${format(share(row, impl)! * 100)}%`)),
  ]);
  return table(['#', 'scenario', ...impls], rows, style, (i) => i >= 2);
}

/** The counts this run used, one row per scenario (the method text refers to them), or per scenario of `keys`. */
function countsTable(results: BenchResults, style: Style, keys?: readonly string[]): string {
  const entries = Object.entries(results.counts).filter(([scenario]) => !keys || keys.includes(scenario));
  const rows = entries.map(([scenario, counts]) => [
    scenario,
    Object.entries(counts as Record<string, number | readonly number[]>)
      .map(([name, value]) => `${name} ${Array.isArray(value) ? value.join(', ') : String(value)}`)
      .join('; '),
  ]);
  return table(['scenario', 'counts'], rows, style, () => false);
}

/** What was run, where and on what: one line each. */
function runFacts(results: BenchResults): string[] {
  const { meta } = results;
  const server = meta.server.external
    ? `existing server (ZK_CONNECT), ZooKeeper ${meta.server.version}, forceSync unknown`
    : `own ${meta.server.topology ?? 'standalone server'}: ZooKeeper ${meta.server.version}, forceSync=${meta.server.forceSync ? 'yes' : 'no'}, tickTime ${meta.server.tickTime} ms, JVM ${meta.server.jvmArgs?.join(' ')}`;
  const source = meta.source.commit
    ? `lib/ at commit ${meta.source.commit}${meta.source.libChangedFiles ? ` plus ${meta.source.libChangedFiles} uncommitted file(s)` : ''}`
    : 'lib/ as checked out';
  const load = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' ');
  return [
    `${meta.startedAt}: ${meta.rounds} measured round(s) after ${meta.warmupRounds} warm-up round(s)${meta.quick ? ', --quick counts (not a measurement)' : ''}, scenarios ${meta.scenarios.join(',')}; ${meta.runtimeSec.toFixed(0)} s`,
    `server: ${server}`,
    `clients: ${IMPLS.filter((i) => meta.versions[i])
      .map((i) => `${i} = ${meta.versions[i]}`)
      .join('; ')}; Node ${meta.versions.node}; ${source}`,
    `machine: ${meta.machine.cpus} × ${meta.machine.cpuModel}; load average ${load(meta.machine.loadavgStart)} at start, ${load(meta.machine.loadavgEnd)} at end`,
    `workers: ${meta.freshWorkers ? 'started and warmed for each scenario alone' : 'one set for every scenario'}; ${meta.serverWarmupMs / 1e3} s of JIT warm-up; queued-before-release checked with ${meta.queueProbe}`,
    ...(meta.network ? [networkFact(meta.network)] : []),
    ...(meta.servers
      ? [
          `servers, in the order sessions are spread over them: ${meta.servers.map((s) => `${s.address} (${s.mode ?? 'mode unknown'})`).join(', ')}`,
        ]
      : []),
  ];
}

/** The latency pass's network: the delay asked, what a client saw, what the proxy held and cost. */
function networkFact(network: NonNullable<BenchResults['meta']['network']>): string {
  const { proxy } = network;
  const lane = (l: typeof proxy.toServer): string =>
    `p50 ${format(l.p50Us)} µs, p99 ${format(l.p99Us)} µs over ${l.chunks.toLocaleString('en-US')} chunks`;
  return (
    `network: every worker through one delay proxy (a process of its own) asked for ${network.oneWayMs} ms each way; ` +
    `a read's round trip ${format(network.pingDirectUs)} µs direct, ${format(network.pingProxiedUs)} µs through it ` +
    `(${format(network.addedOneWayUs)} µs added each way); the proxy held chunks to the server ${lane(proxy.toServer)}, ` +
    `to the client ${lane(proxy.toClient)}; its CPU ${format(proxy.cpuMs / 1e3)} s over the pass`
  );
}

/** The hand-written account of the method, beside this file. */
const METHOD = (): string => readFileSync(join(__dirname, 'method.md'), 'utf8').trim();

/** The sections of a report, each a title (none for the first) and its body. */
function sections(results: BenchResults, style: Style, chartFile?: string): Array<[string, string]> {
  const md = style === 'markdown';
  const facts = runFacts(results)
    .map((line) => (md ? `- ${line}` : line))
    .join('\n');
  const metrics = metricsTable(results, style) + (chartFile ? `\n\n![Benchmark chart](${chartFile})` : '');
  const out: Array<[string, string]> = [
    ['', `${facts}\n\n${metrics}`],
    ['Targets', targetsTable(results, style)],
    [
      'Where the round trips go',
      'Per unit of work, medians over rounds, heartbeats left out; n/c: not countable.\n\n' +
        roundTripsTable(results, style),
    ],
  ];
  if (results.clientCpu?.length) {
    const server = results.clientCpu.some((row) => row.server)
      ? `\n\nThe ZooKeeper server's share while each implementation ran the scenario:\n\n${cpuTable(results, style, 'server')}`
      : '';
    out.push([
      'Client CPU',
      `Share of one core (the machine has ${results.meta.machine.cpus}), median over rounds: each implementation's worker processes while it ran the scenario.\n\n` +
        cpuTable(results, style, 'busy') +
        server,
    ]);
  }
  if (results.problems.length) out.push(['Problems', results.problems.map((p) => `- ${p}`).join('\n')]);
  return out;
}

function render(parts: Array<[string, string]>, heading: (title: string) => string): string {
  return parts.map(([title, body]) => (title ? `${heading(title)}\n\n${body}` : body)).join('\n\n');
}

/** Everything, for the console. */
export function consoleReport(results: BenchResults): string {
  const text = render(sections(results, 'text'), (title) => title);
  const ensemble = results.ensemble;
  if (!ensemble) return text;
  const pass = render(sections(ensemble, 'text'), (title) => `${title} (ensemble)`);
  return `${text}\n\nOn a 3-server ensemble\n\n${pass}`;
}

/** The markdown page (docs/bench/latest.md): tables, the chart, then the method as written by hand. */
export function markdownReport(results: BenchResults, chartFile: string | undefined): string {
  const { forceSync } = results.meta.server;
  const mode =
    forceSync === false
      ? 'forceSync=no (client-bound)'
      : forceSync
        ? 'forceSync=yes (as in production)'
        : 'existing server';
  const ensemble = results.ensemble
    ? [
        '## On a 3-server ensemble\n\nScenarios 1 and 2 again, on three ZooKeeper servers on loopback (same flags as the standalone server), every session of every implementation on the same follower.',
        render(sections(results.ensemble, 'markdown'), (title) => `**${title} on the ensemble**`),
      ]
    : [];
  return (
    [
      `# Benchmark: ${mode}`,
      `Generated by \`npm run bench${forceSync === false ? ' -- --no-sync' : ''}\`; do not edit by hand.`,
      render(sections(results, 'markdown', chartFile), (title) => `## ${title}`),
      ...ensemble,
      `## Counts\n\n${countsTable(results, 'markdown')}`,
      `## How each figure is measured\n\n${METHOD()}`,
    ].join('\n\n') + '\n'
  );
}

/** Every latency pass's targets in one table: the goals at each delay, side by side. */
function latencyGoals(results: LatencyResults, style: Style): string {
  return targetsTable({ targets: results.passes.flatMap((pass) => pass.targets) } as BenchResults, style);
}

/** The latency passes for the console. */
export function consoleLatencyReport(results: LatencyResults): string {
  return [
    `On a network with latency\n\nGoals\n\n${latencyGoals(results, 'text')}`,
    ...results.passes.map((pass) =>
      render(sections(pass, 'text'), (title) => `${title} (${pass.meta.network?.oneWayMs} ms each way)`),
    ),
  ].join('\n\n');
}

/** The markdown page of the latency passes (docs/bench/latest-latency.md); its sections nest under one heading of the page. */
export function latencyMarkdownReport(results: LatencyResults): string {
  return (
    [
      '# Benchmark: a network with latency',
      'Generated by `npm run bench` (its latency passes); do not edit by hand.',
      `## Goals\n\n${latencyGoals(results, 'markdown')}`,
      ...results.passes.map(
        (pass) =>
          `## ${pass.meta.network?.oneWayMs} ms each way\n\n` +
          render(sections(pass, 'markdown'), (title) => `**${title}, ${pass.meta.network?.oneWayMs} ms each way**`),
      ),
    ].join('\n\n') + '\n'
  );
}

/** The capacity pass for the console. */
export function consoleCapacityReport(results: BenchResults): string {
  return `The ensemble's capacity\n\n${render(sections(results, 'text'), (title) => `${title} (capacity)`)}`;
}

/** The markdown page of the capacity pass (docs/bench/latest-capacity.md); its sections nest under one heading of the page. */
export function capacityMarkdownReport(results: BenchResults): string {
  const counted = SCENARIOS.filter((s) => results.meta.scenarios.includes(s.id)).map((s) => s.key);
  return (
    [
      "# Benchmark: the ensemble's capacity",
      'Generated by `npm run bench` (its capacity pass); do not edit by hand.',
      render(sections(results, 'markdown'), (title) => `## ${title}`),
      `## Counts\n\n${countsTable(results, 'markdown', counted)}`,
    ].join('\n\n') + '\n'
  );
}
