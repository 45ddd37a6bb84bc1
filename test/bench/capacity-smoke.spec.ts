import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseBenchArgs, QUICK_COUNTS } from '../../bench/options';
import type { BenchResults, MetricRow, RoundTripRow } from '../../bench/results';
import { runBench } from '../../bench/runner';
import { capacityMarkdownReport, consoleCapacityReport } from '../../bench/report/tables';
import { writeCapacityReports } from '../../bench/report/write';
import { spreadSessions, type CapacitySample } from '../../bench/scenarios/capacity.scenario';
import type { HeldLocksSample } from '../../bench/scenarios/held-locks.scenario';
import type { SessionsSample } from '../../bench/scenarios/sessions.scenario';
import type { ImplName } from '../../bench/workers/impl.protocol';
import { zkConnect } from '../support/zk-test-env';

/**
 * The capacity pass in miniature (`--capacity-only --quick`), against the test server: scenario
 * 10 for ours, raw and Curator, then 11 and 12 (ours), so the pass cannot rot. It checks shapes, the layout and the
 * counting, not speed. The test server is shared with other suites: their writes may add to
 * the transactions counted, never take from them.
 */
describe('benchmark harness, the capacity pass', () => {
  let results: BenchResults;
  const { clients, processes } = QUICK_COUNTS.capacity;

  beforeAll(async () => {
    const options = parseBenchArgs(['--quick', '--rounds', '1', '--capacity-only'], {
      ZK_CONNECT: zkConnect(),
      ZK_SERVER_PID: process.env.ZK_SERVER_PID,
    });
    results = await runBench(options, { capacity: true });
  }, 60_000);

  const metric = (id: string): MetricRow => {
    const found = results.metrics.find((m) => m.id === id);
    if (!found) throw new Error(`no metric ${id} in ${results.metrics.map((m) => m.id).join(', ')}`);
    return found;
  };
  const trips = (impl: ImplName, per: string): RoundTripRow => {
    const found = results.roundTrips.find((r) => r.scenario === 10 && r.impl === impl && r.per.includes(per));
    if (!found) throw new Error(`no round trips for ${impl} ${per}`);
    return found;
  };
  const sample = (impl: ImplName): CapacitySample => results.samples.capacity?.[impl]?.[0] as CapacitySample;

  const samples = <S>(key: string): S[] => (results.samples[key]?.ours ?? []) as S[];

  it('ran scenario 10 for ours, raw and Curator, in as many worker processes each as the counts say, then 11 and 12', () => {
    expect(results.kind).toBe('capacity');
    expect(results.meta.scenarios).toEqual([10, 11, 12]);
    expect(results.problems).toEqual([]);
    expect(Object.keys(results.samples.capacity ?? {}).sort()).toEqual(['curator', 'ours', 'raw']);
    expect(Object.keys(results.samples.sessions ?? {})).toEqual(['ours']);
    expect(Object.keys(results.samples.heldLocks ?? {})).toEqual(['ours']);
    expect(results.meta.clockChecks.map((c) => c.worker).sort()).toEqual(
      ['curator', 'ours', 'raw'].flatMap((impl) => Array.from({ length: processes }, (_, i) => `${impl}#${i + 1}`)),
    );
    // The servers the sessions were spread over, with what each said it is.
    expect(results.meta.servers).toEqual([{ address: zkConnect(), mode: 'standalone' }]);
    expect(results.targets.map((t) => t.id)).toEqual(['C1', 'C1c', '11', '12']);
    // Judged by the library's own count of the writes idle sessions send, on any server.
    expect(results.targets.find((t) => t.id === '11')!.pass).toBe(true);
    expect(typeof results.targets[0].pass).toBe('boolean');
    expect(results.targets[0].label).toContain(`${Math.max(...clients)} clients`);
  });

  it('measured each number of clients for each implementation: cycles, transactions and CPU per cycle', () => {
    for (const impl of ['ours', 'raw', 'curator'] as const) {
      const points = sample(impl).points;
      expect(points.map((p) => [p.clients, p.processes])).toEqual(clients.map((c) => [c, Math.min(c, processes)]));
      for (const p of points) {
        expect(p.cyclesPerSec).toBeGreaterThan(0);
        expect(p.cycles).toBeGreaterThanOrEqual(p.cyclesPerSec * (QUICK_COUNTS.capacity.durationMs / 1e3));
        // A create and a delete a cycle, at least (other suites write to this server too).
        expect(p.txPerCycle).toBeGreaterThanOrEqual(2);
        expect(p.clientCores).toBeGreaterThan(0);
        expect(p.clientCpuUsPerCycle).toBeGreaterThan(0);
        // The test server's process is known (its CPU is read in 10 ms ticks: a short window may read 0);
        // the leader's share needs each server's process, which an existing server does not give.
        expect(p.serverCores).not.toBeNull();
        expect(p.serverCores!).toBeGreaterThanOrEqual(0);
        expect(p.leaderShare).toBeNull();
      }
    }
    for (const c of clients) {
      expect(metric(`capacity.${c}.cyclesPerSec`).ratio.raw).toBeGreaterThan(0);
      expect(metric(`capacity.${c}.cyclesPerSec`).ratio.curator).toBeGreaterThan(0);
      expect(metric(`capacity.${c}.txPerCycle`).ratio).toEqual({});
      // Every implementation sends the same three requests a cycle: one create, one read, one delete.
      expect(trips('raw', `(${c} client`).byOp).toEqual({ create: 1, getChildren: 1, remove: 1 });
      for (const impl of ['ours', 'curator'] as const) {
        const { byOp } = trips(impl, `(${c} client`);
        expect([impl, byOp.create, byOp.remove]).toEqual([impl, 1, 1]);
      }
    }
    expect(metric('capacity.scaling').median.ours).toBeGreaterThan(0);
  });

  it('11. many sessions: every one connected and listed by the server, none left once closed; idle reads, holders write', () => {
    const { sessions } = QUICK_COUNTS.sessions;
    const [sample] = samples<SessionsSample>('sessions');
    expect(sample.connectAllMs).toBeGreaterThan(0);
    // By session id, in the server's own lists (cons: connections; dump: sessions tracked).
    expect(sample.listed).toEqual({ connections: sessions, perServer: [sessions], sessions });
    expect(sample.left).toEqual({ connections: 0, sessions: 0 });
    // The test server is shared: others' writes may land in the windows, never below none.
    expect(sample.idle.transactions).toBeGreaterThanOrEqual(0);
    expect(sample.idle.clientRequests).toBeGreaterThan(0); // the liveness reads
    expect(sample.idle.clientWrites).toBe(0); // idle: the liveness reads are reads
    expect(sample.hold.clientWrites).toBeGreaterThan(0); // the holders' heartbeats are writes
    expect(sample.idle.serverPackets).toBeGreaterThan(0);
    expect(sample.hold.transactions).toBeGreaterThan(0); // the holders' heartbeat writes, one a second or more each
    expect(metric('sessions.idleTxPerSessionPerSec').median.ours).toBeGreaterThanOrEqual(0);
  });

  it('12. many held locks: a heap figure, one ephemeral node per held lock in the server, none left after the releases', () => {
    const [sample] = samples<HeldLocksSample>('heldLocks');
    expect(sample.locks).toBe(QUICK_COUNTS.heldLocks.locks);
    expect(sample.acquireNs).toBeGreaterThan(0);
    expect(sample.server.ephemerals).toBe(sample.locks); // the session's own, from the server's dump
    expect(sample.left).toEqual({ listed: 0, ephemerals: 0 });
    expect(Number.isFinite(metric('heldLocks.heapPerLockKB').median.ours)).toBe(true);
    expect(results.targets.find((t) => t.id === '12')!.measured).toMatch(/ KB$/);
  });

  it('renders the pass on its own page and between its own markers of the benchmarks page', () => {
    expect(consoleCapacityReport(results)).toContain("The ensemble's capacity");
    const markdown = capacityMarkdownReport(results);
    expect(markdown).toMatch(/^# Benchmark: the ensemble's capacity/);
    expect(markdown).toContain('servers, in the order sessions are spread over them: ');
    expect(markdown).toMatch(/## Counts\n\n[^#]*\| capacity \| clients 1, 4; processes 2;/);
    const dir = mkdtempSync(join(tmpdir(), 'bench-capacity-'));
    try {
      const docsDir = join(dir, 'docs', 'bench');
      mkdirSync(docsDir, { recursive: true });
      const page = join(dir, 'docs', 'benchmarks.md');
      writeFileSync(
        page,
        'intro\n<!-- bench:start -->\nkept\n<!-- bench:end -->\n<!-- capacity:start -->\nold\n<!-- capacity:end -->\nend\n',
      );
      writeCapacityReports(results, { docsDir });
      expect(readFileSync(join(docsDir, 'latest-capacity.md'), 'utf8')).toBe(markdown);
      const text = readFileSync(page, 'utf8');
      // The loopback part is left alone (no docs/bench/latest.md here); the capacity part, headings one level down.
      expect(text).toMatch(/<!-- bench:start -->\nkept\n<!-- bench:end -->/);
      expect(text).toMatch(
        /<!-- capacity:start -->\nGenerated by the capacity pass[\s\S]*\n### Targets\n[\s\S]*<!-- capacity:end -->\nend\n$/,
      );
      expect(text).not.toContain('\nold\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the capacity layout', () => {
  it('puts session i in worker process i mod P and on server i mod S, the same for every implementation', () => {
    const servers = ['a:1', 'b:2', 'c:3'];
    const layout = spreadSessions(50, 5, servers);
    expect(layout.map((sessions) => sessions.length)).toEqual([10, 10, 10, 10, 10]);
    expect(
      layout
        .flat()
        .map((s) => s.index)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const perServer = servers.map((server) => layout.flat().filter((s) => s.server === server).length);
    expect(perServer).toEqual([17, 17, 16]);
    // Each process talks to every server, as production clients of one application would.
    for (const sessions of layout) expect(new Set(sessions.map((s) => s.server)).size).toBe(3);
    expect(layout[1].slice(0, 2)).toEqual([
      { index: 1, server: 'b:2' },
      { index: 6, server: 'a:1' },
    ]);
    // Fewer clients than processes: one process a session.
    expect(spreadSessions(1, 5, servers)).toEqual([[{ index: 0, server: 'a:1' }]]);
  });
});

describe('capacity command line', () => {
  it('runs the capacity pass in a full run, with --capacity, or when --scenario names a capacity scenario', () => {
    expect(parseBenchArgs([], {})).toMatchObject({ capacity: 'also' });
    expect(parseBenchArgs(['--no-capacity'], {})).toMatchObject({ capacity: 'no' });
    expect(parseBenchArgs(['--quick'], {})).toMatchObject({ capacity: 'no' });
    expect(parseBenchArgs(['--quick', '--capacity'], {})).toMatchObject({ capacity: 'also' });
    expect(parseBenchArgs(['--scenario', '1,10'], {})).toMatchObject({ capacity: 'also', scenarios: [1, 10] });
    expect(parseBenchArgs(['--scenario', '1'], {})).toMatchObject({ capacity: 'no' });
    expect(parseBenchArgs(['--capacity-only'], {})).toMatchObject({ capacity: 'only', ensemble: 'no' });
    expect(parseBenchArgs(['--latency-only'], {})).toMatchObject({ capacity: 'no' });
    expect(() => parseBenchArgs(['--capacity-only', '--scenario', '1'], {})).toThrow(/--capacity-only runs/);
    expect(() => parseBenchArgs(['--capacity-only', '--latency-only'], {})).toThrow(/choose one/);
  });
});
