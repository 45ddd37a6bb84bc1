import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ALL_SCENARIOS, CAPACITY_SCENARIOS, parseBenchArgs, QUICK_COUNTS } from '../../bench/options';
import type { BenchResults, MetricRow, RoundTripRow } from '../../bench/results';
import { QUICK_PARTITION_COUNTS, runPartitionPass, type PartitionResults } from '../../bench/partitions/partition-pass';
import { writePartitionReports } from '../../bench/partitions/partition-report';
import { runBench } from '../../bench/runner';
import { SCENARIOS } from '../../bench/scenarios/all-scenarios';
import { svgChart } from '../../bench/report/chart';
import { consoleLatencyReport, consoleReport, latencyMarkdownReport, markdownReport } from '../../bench/report/tables';
import { docsBaseName, writeLatencyReports, writeReports } from '../../bench/report/write';
import type { HandoffSample } from '../../bench/scenarios/handoff.scenario';
import type { LeasesSample } from '../../bench/scenarios/leases.scenario';
import type { MultiLockSample } from '../../bench/scenarios/multi-lock.scenario';
import type { ReadHeavySample } from '../../bench/scenarios/read-heavy.scenario';
import type { IdleSample } from '../../bench/scenarios/idle.scenario';
import type { ReentrantSample } from '../../bench/scenarios/reentrant.scenario';
import type { UncontendedSample } from '../../bench/scenarios/uncontended.scenario';
import type { ImplName } from '../../bench/workers/impl.protocol';
import { zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

/** The scenarios of the loopback passes: all but the capacity pass's (test/bench/capacity-smoke.spec.ts). */
const LOOPBACK_SCENARIOS = ALL_SCENARIOS.filter((s) => !CAPACITY_SCENARIOS.includes(s));

/**
 * `npm run bench -- --quick` in miniature, against the test server: every scenario of the
 * loopback pass for every implementation (this library, the raw loop, Kazoo, Curator), so
 * the harness cannot rot. It checks shapes and sane values, not speed.
 */
describe('benchmark harness, --quick against the test ZooKeeper', () => {
  let results: BenchResults;

  beforeAll(async () => {
    const options = parseBenchArgs(['--quick', '--rounds', '1'], {
      ZK_CONNECT: zkConnect(),
      ZK_SERVER_PID: process.env.ZK_SERVER_PID,
    });
    results = await runBench(options);
  }, 60_000);

  const metric = (id: string): MetricRow => {
    const found = results.metrics.find((m) => m.id === id);
    if (!found) throw new Error(`no metric ${id} in ${results.metrics.map((m) => m.id).join(', ')}`);
    return found;
  };
  const trips = (scenario: number, impl: ImplName, per?: string): RoundTripRow => {
    const found = results.roundTrips.find(
      (r) => r.scenario === scenario && r.impl === impl && (per === undefined || r.per.includes(per)),
    );
    if (!found) throw new Error(`no round trips for scenario ${scenario} ${impl} ${per ?? ''}`);
    return found;
  };
  const keyOf = (scenario: number): string => SCENARIOS.find((s) => s.id === scenario)!.key;
  const samples = <S>(key: string, impl: ImplName): S[] => (results.samples[key]?.[impl] ?? []) as S[];

  it('used the given server, one measured round, every scenario, and checked the shared clock', () => {
    expect(results.meta.server).toMatchObject({ external: true, forceSync: null });
    expect(results.meta).toMatchObject({ rounds: 1, warmupRounds: 0, quick: true, scenarios: LOOPBACK_SCENARIOS });
    expect(results.meta.clockChecks.length).toBeGreaterThanOrEqual(8); // ours, raw, kazoo, curator: two processes each
    expect(results.meta.clockChecks.every((c) => c.ok)).toBe(true);
    expect(results.meta.versions.kazoo).toMatch(/^kazoo 2\.\d/);
    expect(results.meta.versions.curator).toMatch(/^curator 5\.\d/i);
    expect(results.meta.versions.raw).toMatch(/^node-zookeeper-client /);
    expect(results.meta.order).toHaveLength(LOOPBACK_SCENARIOS.length);
    expect(results.problems).toEqual([]);
  });

  it("measured each implementation's client CPU in every scenario, and the server's, and reports them", () => {
    const serverKnown = process.env.ZK_SERVER_PID !== undefined;
    const rows = results.clientCpu ?? [];
    expect(rows.map((r) => r.scenario).sort((a, b) => a - b)).toEqual(LOOPBACK_SCENARIOS);
    for (const row of rows) {
      for (const impl of Object.keys(results.samples[keyOf(row.scenario)] ?? {}) as ImplName[]) {
        const busy = row.busy[impl];
        expect([row.scenario, impl, busy !== undefined && busy > 0 && busy < 16]).toEqual([row.scenario, impl, true]);
        // The server's CPU, from /proc in 10 ms ticks (a short quick-mode run may read 0),
        // when its process is known: the tests' own server, not one given by ZK_CONNECT.
        const server = row.server?.[impl];
        const known = serverKnown ? server !== undefined && server >= 0 && server < 16 : server === undefined;
        expect([row.scenario, impl, known]).toEqual([row.scenario, impl, true]);
      }
    }
    const serverTotal = rows.flatMap((row) => Object.values(row.server ?? {})).reduce((sum, share) => sum + share, 0);
    expect(serverTotal > 0).toBe(serverKnown);
    expect(markdownReport(results, undefined)).toContain('## Client CPU');
    expect(markdownReport(results, undefined).includes("The ZooKeeper server's share")).toBe(serverKnown);
  });

  it('ran each scenario for the implementations it compares', () => {
    const implsOf = (key: string) => Object.keys(results.samples[key] ?? {}).sort();
    expect(implsOf('uncontended')).toEqual(['curator', 'kazoo', 'ours', 'raw']);
    expect(implsOf('handoff')).toEqual(['curator', 'kazoo', 'ours', 'raw']);
    expect(implsOf('drain')).toEqual(['curator', 'kazoo', 'ours', 'raw']);
    expect(implsOf('manyLocks')).toEqual(['ours', 'raw']);
    expect(implsOf('reentrant')).toEqual(['ours']);
    expect(implsOf('readHeavy')).toEqual(['curator', 'kazoo', 'ours']);
    expect(implsOf('multiLock')).toEqual(['curator', 'kazoo', 'ours', 'raw']);
    expect(implsOf('leases')).toEqual(['curator', 'kazoo', 'ours']);
  });

  it('1. uncontended: positive rates, and every cycle sends requests (raw: exactly create, getChildren, delete)', () => {
    const row = metric('uncontended.cyclesPerSec');
    for (const impl of ['ours', 'raw', 'kazoo'] as const) expect(row.median[impl]).toBeGreaterThan(0);
    expect(row.ratio.raw).toBeGreaterThan(0);
    expect(row.ratio.kazoo).toBeGreaterThan(0);
    expect(trips(1, 'raw').byOp).toEqual({ create: 1, getChildren: 1, remove: 1 });
    const ours = trips(1, 'ours');
    expect(ours.requests).toBeGreaterThan(0);
    expect(ours.byOp.create).toBeGreaterThanOrEqual(1); // one node per cycle, at least
    expect(ours.byOp.remove).toBeGreaterThanOrEqual(1);
    expect(trips(1, 'kazoo').requests).toBeGreaterThanOrEqual(3);
    // The raw loop with the read sent behind the create, as ours: raw's figure only.
    // And the same requests on a session spoken by hand (the wire floor): raw's figure only.
    for (const id of ['uncontended.rawPipelinedCyclesPerSec', 'uncontended.wireCyclesPerSec']) {
      const floor = metric(id);
      expect(Object.keys(floor.median)).toEqual(['raw']);
      expect(floor.median.raw).toBeGreaterThan(0);
    }
    const [rawSample] = samples<UncontendedSample>('uncontended', 'raw');
    expect(rawSample.wire?.cycles).toBe(rawSample.cycles);
  });

  it('2. handoff: latencies ordered, one watch notification per handoff for ours and raw', () => {
    for (const impl of ['ours', 'raw', 'kazoo'] as const) {
      const [sample] = samples<HandoffSample>('handoff', impl);
      expect(sample.handoffs).toBe(QUICK_COUNTS.handoff.handoffs);
      expect(sample.p50Us).toBeGreaterThan(0);
      expect(sample.p99Us).toBeGreaterThanOrEqual(sample.p50Us);
      expect(sample.maxUs).toBeGreaterThanOrEqual(sample.p99Us);
    }
    // Each waiter was queued with its watch set (the probe checks) before each release.
    expect(trips(2, 'ours').notifications).toBe(1);
    expect(trips(2, 'raw').notifications).toBe(1);
    expect(trips(2, 'kazoo').notifications).toBeNull();
  });

  it('3. drain: a time for each N, and each waiter notified exactly once', () => {
    for (const n of QUICK_COUNTS.drain.waiters) {
      const row = metric(`drain.${n}.drainMs`);
      for (const impl of ['ours', 'raw', 'kazoo'] as const) expect(row.median[impl]).toBeGreaterThan(0);
      expect(trips(3, 'ours', `N=${n})`).notifications).toBe(1);
      expect(trips(3, 'raw', `N=${n})`).notifications).toBe(1);
      const perHandoff = metric(`drain.${n}.reqNotifPerHandoff`).median.ours!;
      expect(perHandoff).toBeGreaterThan(1);
      expect(perHandoff).toBeLessThan(20);
    }
  });

  it('4. many locks: positive rates; a heap figure for ours; raw sends exactly 3 requests a cycle', () => {
    const row = metric('manyLocks.cyclesPerSec');
    expect(row.median.ours).toBeGreaterThan(0);
    expect(row.median.raw).toBeGreaterThan(0);
    expect(Number.isFinite(metric('manyLocks.heapPerLockKB').median.ours)).toBe(true);
    expect(trips(4, 'raw').requests).toBe(3);
    expect(trips(4, 'ours').requests).toBeGreaterThanOrEqual(3);
  });

  it('5. reentrant: a positive cost per call, and nothing sent to ZooKeeper', () => {
    const [sample] = samples<ReentrantSample>('reentrant', 'ours');
    expect(sample.usPerCall).toBeGreaterThan(0);
    expect(sample.sent).toBe(0);
    expect(trips(5, 'ours').requests).toBe(0);
    expect(results.targets.find((t) => t.id === '5')!.measured).toMatch(/µs, 0 requests$/);
  });

  it('6. read-heavy: readers cycle and the writer gets in (ours); Kazoo reports its figures', () => {
    const [ours] = samples<ReadHeavySample>('readHeavy', 'ours');
    expect(ours.readerCyclesPerSec).toBeGreaterThan(0);
    expect(ours.writerGrants).toBeGreaterThan(0);
    expect(ours.writerWaitP99Ms).toBeGreaterThanOrEqual(ours.writerWaitP50Ms);
    const [kazoo] = samples<ReadHeavySample>('readHeavy', 'kazoo');
    expect(kazoo.stalls).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(kazoo.readerCyclesPerSec)).toBe(true);
  });

  it('7. multi-lock: every variant timed; acquireAll and raw send the creates as one multi and the deletes as another; Kazoo in turn', () => {
    const { locks, cycles } = QUICK_COUNTS.multiLock;
    const [ours] = samples<MultiLockSample>('multiLock', 'ours');
    const [kazoo] = samples<MultiLockSample>('multiLock', 'kazoo');
    const [raw] = samples<MultiLockSample>('multiLock', 'raw');
    expect(Object.keys(ours.variants).sort()).toEqual(['all', 'one', 'seq']);
    expect(Object.keys(raw.variants).sort()).toEqual(['all', 'one']);
    expect(Object.keys(kazoo.variants).sort()).toEqual(['one', 'seq']);
    for (const v of [ours, raw, kazoo].flatMap((sample) => Object.values(sample.variants))) {
      expect(v.cycles).toBe(cycles);
      expect(v.p50Us).toBeGreaterThan(0);
    }
    const group = trips(7, 'ours', 'as a group');
    expect(group.byOp.multi).toBeGreaterThanOrEqual(2); // one transaction of creates, one of deletes
    // The children reads: one multiRead a cycle once the server (3.8) said its version, one read each name before.
    expect(group.byOp.multiRead).toBeGreaterThan(0);
    expect((group.byOp.multiRead ?? 0) + (group.byOp.getChildren ?? 0) / locks).toBeCloseTo(1, 5);
    expect(group.notifications).toBe(0); // free names: nobody waits
    // Ours' wire shape with plain callbacks, but one read per name: node-zookeeper-client has no multiRead.
    expect(trips(7, 'raw', 'as a group').byOp).toEqual({ multi: 2, getChildren: locks });
    expect(trips(7, 'raw', '1 name').byOp).toEqual({ create: 1, getChildren: 1, remove: 1 });
    expect(trips(7, 'kazoo', 'as a group').byOp).toMatchObject({ create: locks, remove: locks });
    expect(trips(7, 'kazoo', 'as a group').notifications).toBe(0);
    expect(metric('multiLock.groupOverOne').median.ours).toBeGreaterThan(0);
    expect(metric('multiLock.groupOverOne').median.raw).toBeGreaterThan(0);
    expect(metric('multiLock.groupP50Us').ratio.kazoo).toBeGreaterThan(0);
  });

  it('8. leases: grants for both, never more holders than leases, and a cost per grant at each N', () => {
    for (const impl of ['ours', 'kazoo'] as const) {
      const [sample] = samples<LeasesSample>('leases', impl);
      expect(sample.throughput.grants).toBeGreaterThan(0);
      expect(sample.cost.map((r) => r.grants)).toEqual(
        QUICK_COUNTS.leases.costContenders.map(() => QUICK_COUNTS.leases.costGrants),
      );
      for (const run of [sample.throughput, ...sample.cost])
        expect(run.maxHolding).toBeLessThanOrEqual(QUICK_COUNTS.leases.maxLeases);
    }
    expect(metric('leases.grantsPerSec').ratio.kazoo).toBeGreaterThan(0);
    for (const n of QUICK_COUNTS.leases.costContenders) {
      const row = metric(`leases.${n}.reqNotifPerGrant`);
      expect(row.median.ours).toBeGreaterThan(1); // at least a create and a delete per grant
      expect(row.median.kazoo).toBeGreaterThan(1);
      expect(trips(8, 'kazoo', `N=${n})`).notifications).not.toBeNull(); // counted in this scenario
    }
  });

  it('9. idle: a transaction rate for an idle and a holding session, and the acquire after idle against a warm one', () => {
    const [sample] = samples<IdleSample>('idle', 'ours');
    // The test server is shared: others' writes may land in the idle window, never below none.
    expect(sample.idlePerClientPerSec).toBeGreaterThanOrEqual(0);
    expect(sample.holderPerSec).toBeGreaterThan(0); // its heartbeats
    expect(sample.afterIdleMs).toBeGreaterThan(0);
    expect(metric('idle.afterIdleOverWarm').median.ours).toBeGreaterThan(0);
  });

  it('evaluates every target; the forceSync=no one only on a forceSync=no server', () => {
    expect(results.targets.map((t) => t.id)).toEqual([
      '1a',
      '1b',
      '2a',
      '2b',
      '3',
      '4a',
      '4b',
      '5',
      '7a',
      '7b',
      '8a',
      '8b',
      '1c',
      '1f',
      '1g',
      '2c',
      '3b',
      '6',
      '7c',
      '8c',
    ]);
    // 7c and 8c (ours against Curator's multi-lock and semaphore), 1f and 1g (the raw
    // pipelined floor and the wire floor against Curator) are reported, with no threshold, and
    // so is 6 (a retired target).
    const reported = ['4a', '1f', '1g', '6', '7c', '8c'];
    for (const t of results.targets) if (!reported.includes(t.id)) expect(typeof t.pass).toBe('boolean');
    for (const id of ['1f', '1g', '6', '7c', '8c']) expect(results.targets.find((t) => t.id === id)!.pass).toBeNull();
    for (const id of ['1f', '1g']) expect(results.targets.find((t) => t.id === id)!.measured).toMatch(/^[\d.]+×/);
    expect(results.targets.find((t) => t.id === '4a')!.pass).toBeNull(); // an existing server: forceSync unknown
  });

  it('renders the console table, the markdown page and a well-formed SVG, and writes them', () => {
    const text = consoleReport(results);
    expect(text).toContain('ours/kazoo');
    expect(text).toContain('Targets');
    const markdown = markdownReport(results, 'latest.svg');
    expect(markdown).toMatch(/^\| # \| metric/m);
    expect(markdown).toContain('![Benchmark chart](latest.svg)');
    const svg = svgChart(results);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toMatch(/&(?!amp;|lt;|gt;|quot;)/);
    expect((svg.match(/<rect /g) ?? []).length).toBeGreaterThan(10);

    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    try {
      const written = writeReports(results, { resultsDir: join(dir, 'results'), docsDir: join(dir, 'docs') });
      expect(written.every((path) => existsSync(path))).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, 'results', 'latest.json'), 'utf8'))).toEqual(
        JSON.parse(JSON.stringify(results)),
      );
      expect(readFileSync(join(dir, 'docs', `${docsBaseName(results)}.svg`), 'utf8')).toBe(svg);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('benchmark harness, --fresh-workers', () => {
  it('runs each scenario in workers started for it alone, and records every implementation of each', async () => {
    const options = parseBenchArgs(['--quick', '--rounds', '1', '--scenario', '1,5', '--fresh-workers'], {
      ZK_CONNECT: zkConnect(),
    });
    expect(options.freshWorkers).toBe(true);
    const results = await runBench(options);
    expect(results.meta.freshWorkers).toBe(true);
    const keyOf = (scenario: number): string => SCENARIOS.find((s) => s.id === scenario)!.key;
    // Scenario 1's four workers (started together, in any order), then scenario 5's own:
    // ours alone, a fifth check where one shared pool would have made four.
    const checked = results.meta.clockChecks.map((c) => c.worker);
    expect(checked.slice(0, 4).sort()).toEqual(['curator#1', 'kazoo#1', 'ours#1', 'raw#1']);
    expect(checked.slice(4)).toEqual(['ours#1']);
    expect(Object.keys(results.samples[keyOf(1)] ?? {}).sort()).toEqual(['curator', 'kazoo', 'ours', 'raw']);
    expect(Object.keys(results.samples[keyOf(5)] ?? {})).toEqual(['ours']);
    expect(results.problems).toEqual([]);
  }, 90_000);
});

describe('benchmark harness, a latency pass', () => {
  it('runs scenarios 1, 2, 7 and 8 with every worker behind one delay proxy, measures its delay, and renders the goals', async () => {
    const quick = parseBenchArgs(['--quick', '--rounds', '1', '--latency', '0.25', '--latency-only'], {
      ZK_CONNECT: zkConnect(),
    });
    // Fewer still than --quick: the harness is what is checked, in a few seconds of CI.
    const counts = {
      ...QUICK_COUNTS,
      uncontended: { cycles: 5, warmup: 1, slices: 1 },
      handoff: { handoffs: 3, warmup: 1 },
      multiLock: { ...QUICK_COUNTS.multiLock, cycles: 2, warmup: 0 },
      leases: { ...QUICK_COUNTS.leases, warmupGrants: 2, durationMs: 50, costContenders: [2, 3], costGrants: 4 },
    };
    const pass = await runBench({ ...quick, counts }, { latencyMs: 0.25 });
    expect(pass.meta.scenarios).toEqual([1, 2, 7, 8]);
    expect(pass.problems).toEqual([]);
    const network = pass.meta.network!;
    expect(network.oneWayMs).toBe(0.25);
    // Every worker (two per implementation, for the handoff) and the ping's session went through it.
    expect(pass.meta.clockChecks.map((c) => c.worker).sort()).toEqual(
      ['curator', 'kazoo', 'ours', 'raw'].flatMap((impl) => [`${impl}#1`, `${impl}#2`]),
    );
    expect(network.proxy.connections).toBeGreaterThanOrEqual(pass.meta.clockChecks.length + 1);
    // Held at least the delay asked, each way; so every read of the ping through it (its session
    // went through it: the + 1 above) took at least the delay both ways. Not compared with the
    // direct read: on a loaded machine a wait for the CPU of a few ms outweighs the 0.5 ms added,
    // either way (two busy loops beside CI: 2.5 ms direct against 1.4 ms through it).
    for (const lane of [network.proxy.toServer, network.proxy.toClient]) {
      expect(lane.chunks).toBeGreaterThan(0);
      expect(lane.p50Us).toBeGreaterThanOrEqual(250);
    }
    expect(network.pingProxiedUs).toBeGreaterThanOrEqual(2 * 250);
    expect(network.pingDirectUs).toBeGreaterThan(0);
    expect(pass.targets.map((t) => t.id)).toEqual(['L1', 'L1b', 'L1k', 'L1g', 'L2', 'L2b', 'L7', 'L7c', 'L8c']);
    // Below 1 ms each way the uncontended goal is reported only; the handoff and multi-lock goals hold at every delay.
    const verdict = (id: string) => pass.targets.find((t) => t.id === id)!.pass;
    expect(verdict('L1')).toBeNull();
    expect(typeof verdict('L2')).toBe('boolean');
    expect(typeof verdict('L7')).toBe('boolean');

    const results = { schema: 1 as const, kind: 'latency' as const, passes: [pass] };
    expect(consoleLatencyReport(results)).toContain('Goals');
    const markdown = latencyMarkdownReport(results);
    expect(markdown).toContain('## 0.25 ms each way');
    expect(markdown).toMatch(/network: every worker through one delay proxy .* asked for 0\.25 ms each way/);
    // The page gets its own section from the latency report, beside the loopback one, between its markers.
    const dir = mkdtempSync(join(tmpdir(), 'bench-latency-'));
    try {
      const docsDir = join(dir, 'docs', 'bench');
      mkdirSync(docsDir, { recursive: true });
      writeFileSync(join(docsDir, 'latest.md'), '# Benchmark\n\n## Targets\n\n| a |\n');
      writeFileSync(join(dir, 'docs', 'benchmarks.md'), 'intro\n<!-- bench:start -->\nold\n<!-- bench:end -->\nend\n');
      writeLatencyReports(results, { docsDir });
      const page = readFileSync(join(dir, 'docs', 'benchmarks.md'), 'utf8');
      expect(page).toMatch(
        /## On a network with latency[\s\S]*### Goals[\s\S]*### 0\.25 ms each way[\s\S]*<!-- bench:end -->\nend/,
      );
      expect(page).not.toContain('\nold\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('bench command line', () => {
  it('reads rounds, scenarios, quick and no-sync, and ZK_CONNECT', () => {
    const options = parseBenchArgs(['--rounds', '7', '--scenario', '3,1', '--no-sync'], {
      ZK_CONNECT: '127.0.0.1:2181',
    });
    expect(options).toMatchObject({
      rounds: 7,
      scenarios: [1, 3],
      forceSync: false,
      quick: false,
      warmupRounds: 1,
      connectionString: '127.0.0.1:2181',
    });
    expect(parseBenchArgs([], {})).toMatchObject({
      rounds: 9,
      scenarios: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
      forceSync: true,
      connectionString: undefined,
      freshWorkers: true,
    });
    expect(parseBenchArgs(['--quick', '--scenario=2'], {})).toMatchObject({
      quick: true,
      rounds: 2,
      warmupRounds: 0,
      scenarios: [2],
      counts: QUICK_COUNTS,
      freshWorkers: false,
    });
    expect(parseBenchArgs(['--shared-workers'], {}).freshWorkers).toBe(false);
    expect(parseBenchArgs(['--scenarios', '12,11,2'], {}).scenarios).toEqual([2, 11, 12]); // by number, not as text
    expect(parseBenchArgs([], {})).toMatchObject({ latency: [0.25, 1], latencyOnly: false });
    expect(parseBenchArgs(['--latency', '1,0.5', '--latency-only'], {})).toMatchObject({
      latency: [0.5, 1],
      latencyOnly: true,
      ensemble: 'no',
    });
    expect(parseBenchArgs(['--latency=none'], {}).latency).toEqual([]);
    expect(parseBenchArgs([], {})).toMatchObject({ peers: 'no' });
    expect(parseBenchArgs([], {}).peerIds).toBeUndefined();
    expect(parseBenchArgs(['--peers'], {}).peers).toBe('also');
    expect(parseBenchArgs(['--peers-only', '--peer', 'redlock-1,ours,ours'], {})).toMatchObject({
      peers: 'only',
      peerIds: ['redlock-1', 'ours'],
    });
  });

  it('refuses what it does not know', () => {
    expect(() => parseBenchArgs(['--rounds', '0'], {})).toThrow(/--rounds needs a whole number >= 1/);
    expect(() => parseBenchArgs(['--scenario', '99'], {})).toThrow(/no scenario 99/);
    expect(() => parseBenchArgs(['--fast'], {})).toThrow(/unknown argument "--fast"/);
    expect(() => parseBenchArgs(['--latency', '0'], {})).toThrow(/--latency needs one-way delays/);
    expect(() => parseBenchArgs(['--latency', 'fast'], {})).toThrow(/--latency needs one-way delays/);
    expect(() => parseBenchArgs(['--latency-only', '--scenario', '5'], {})).toThrow(/--latency-only runs scenarios/);
    expect(() => parseBenchArgs(['--peer', 'redlock,ours'], {})).toThrow(
      /--peer needs locks among ours, redlock-1, redlock-3, redis-semaphore, nest-redlock, murlock, not "redlock"/,
    );
    expect(() => parseBenchArgs(['--peer'], {})).toThrow(/--peer needs locks among/);
    expect(() => parseBenchArgs([], { ZK_CONNECT: '127.0.0.1:2181', ZK_SERVER_PID: '12,x' })).toThrow(
      /ZK_SERVER_PID: "x" is not a process id/,
    );
  });

  it("takes an existing server's process ids with it, and only with it", () => {
    expect(parseBenchArgs([], { ZK_CONNECT: '127.0.0.1:2181', ZK_SERVER_PID: '12,34' }).serverPids).toEqual([12, 34]);
    expect(parseBenchArgs([], { ZK_SERVER_PID: '12' }).serverPids).toBeUndefined();
  });
});

/**
 * `npm run bench -- --partitions --quick` against the test server: every step for both
 * implementations, so the pass cannot rot. Checks what each implementation's design
 * promises (ours: only what must move moves; Kazoo: every part is released on every change),
 * not how fast.
 */
describe('benchmark harness, the partition pass (--partitions --quick)', () => {
  let results: PartitionResults;
  beforeAll(async () => {
    results = await runPartitionPass({ connectionString: zkConnect(), quick: true, log: () => undefined });
  }, 120_000);

  it('measured a join, a leave and a crash for both, with no part ever owned twice', () => {
    const { parts, members } = results.counts;
    expect(results.counts).toEqual(QUICK_PARTITION_COUNTS);
    expect(results.rows.map((r) => `${r.impl} ${r.step}`)).toEqual([
      'ours join',
      'ours leave',
      'ours crash',
      'kazoo join',
      'kazoo leave',
      'kazoo crash',
    ]);
    for (const row of results.rows) {
      expect([row.impl, row.step, row.overlaps]).toEqual([row.impl, row.step, 0]);
      expect(row.maxGapMs).toBeLessThanOrEqual(row.totalGapMs);
    }
    const row = (impl: string, step: string) => results.rows.find((r) => r.impl === impl && r.step === step)!;
    // Ours: a join moves what the newcomer takes, a leave or crash only the leaver's share; only moved parts stop.
    const share = [Math.floor(parts / members), Math.ceil(parts / members)];
    for (const step of ['join', 'leave', 'crash']) {
      expect(share).toContain(row('ours', step).moved);
      expect(row('ours', step).interrupted).toBe(row('ours', step).moved);
    }
    // A crashed member's parts wait for its session to expire.
    expect(row('ours', 'crash').maxGapMs).toBeGreaterThan(results.counts.sessionTimeoutMs / 2);
    // Kazoo: every member releases its whole set on every change.
    for (const step of ['join', 'leave', 'crash']) expect(row('kazoo', step).interrupted).toBe(parts);
  });

  it('removed its znodes from the given server, and writes its report', async () => {
    const zk = await ZkInspector.connect(zkConnect());
    try {
      expect(await zk.exists(results.meta.base)).toBe(false);
    } finally {
      await zk.close();
    }
    expect(results.meta.external).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'bench-partitions-'));
    try {
      const written = writePartitionReports(results, { resultsDir: dir, docsDir: join(dir, 'docs') });
      expect(written.map((p) => p.slice(dir.length + 1)).sort()).toEqual(
        [
          'docs/latest-partitions.json',
          'docs/latest-partitions.md',
          'latest-partitions.json',
          `${results.meta.startedAt.replace(/[:.]/g, '-')}-partitions.json`,
        ].sort(),
      );
      const md = readFileSync(join(dir, 'docs', 'latest-partitions.md'), 'utf8');
      expect(md).toContain(`${results.counts.parts} parts over ${results.counts.members} members`);
      expect(md.split('\n').filter((line) => /^\| (join|leave|crash) \| (ours|kazoo) \|/.test(line))).toHaveLength(6);
      expect(parseBenchArgs(['--partitions', '--quick'], {})).toMatchObject({ partitions: true, quick: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
