/**
 * `npm run bench`: this library side by side with the raw node-zookeeper-client loop,
 * Kazoo 2.8 and Curator 5, on a ZooKeeper it starts itself; then, in a full run or with
 * --ensemble, scenarios 1 and 2 again on a 3-server ensemble; then (unless --latency none)
 * scenarios 1, 2, 7 and 8 behind a delay proxy at each --latency delay; then, in a full run
 * or with --capacity, the capacity scenarios on a 3-server ensemble, sessions spread over
 * its servers; then the fence's cost in PostgreSQL (fence/fence-cost.ts). See options.ts for the flags.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import {
  ALL_SCENARIOS,
  CAPACITY_SCENARIOS,
  LATENCY_SCENARIOS,
  parseBenchArgs,
  USAGE,
  type BenchOptions,
} from './options.js';
import { PgServer } from '../test/support/postgres/pg-server.js';
import { FENCE_COUNTS, fenceMarkdown, measureFenceCost, QUICK_FENCE_COUNTS } from './fence/fence-cost.js';
import type { BenchResults, LatencyResults } from './results.js';
import { runPartitionPass } from './partitions/partition-pass.js';
import { partitionTable, writePartitionReports } from './partitions/partition-report.js';
import { runBench } from './runner.js';
import { SCENARIOS } from './scenarios/all-scenarios.js';
import { consoleCapacityReport, consoleLatencyReport, consoleReport } from './report/tables.js';
import { rejudged } from './report/targets.js';
import {
  writeCapacityReports,
  writeFenceReports,
  writeLatencyReports,
  writePassReports,
  writeReports,
} from './report/write.js';
import { peersMarkdown, runPeersPass } from './peers/peers-pass.js';

const ROOT = join(__dirname, '..');

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const docsDir = join(ROOT, 'docs', 'bench');
  if (options.render) {
    const saved = JSON.parse(readFileSync(options.render, 'utf8')) as BenchResults | LatencyResults;
    const written =
      saved.kind === 'latency'
        ? writeLatencyReports({ ...saved, passes: saved.passes.map((p) => rejudged(p)) }, { docsDir })
        : saved.kind === 'capacity'
          ? writeCapacityReports(rejudged(saved), { docsDir })
          : writeReports(rejudged(saved), { docsDir });
    announce(written, true, '');
    return;
  }
  const log = (line: string): void => console.error(line);
  if (options.partitions) return partitions(options, log, docsDir);
  if (options.peers === 'only') return peers(options, log, docsDir);
  const selected = (ids: readonly number[]): boolean => options.scenarios.some((s) => ids.includes(s));
  if (options.capacity !== 'only') {
    if (!options.latencyOnly && options.scenarios.some((s) => !CAPACITY_SCENARIOS.includes(s)))
      await loopback(options, log, docsDir);
    if (options.latency.length && selected(LATENCY_SCENARIOS)) await latency(options, log, docsDir);
  }
  if (options.capacity !== 'no' && selected(CAPACITY_SCENARIOS)) await capacity(options, log, docsDir);
  if (options.capacity !== 'only' && !options.latencyOnly) await fenceCost(options, log, docsDir);
  if (options.peers === 'also') await peers(options, log, docsDir);
}

/**
 * The peers pass: this library beside the Redis locks, speed and faults, on servers of its
 * own (PostgreSQL: DATABASE_URL's or its own). The committed copy (docs/bench/latest-peers.*)
 * only when not --quick, every lock, on its own PostgreSQL.
 */
async function peers(
  options: ReturnType<typeof parseBenchArgs>,
  log: (line: string) => void,
  docsDir: string,
): Promise<void> {
  const given = process.env.DATABASE_URL;
  const server = given ? undefined : new PgServer();
  try {
    await server?.start();
    const results = await runPeersPass({
      quick: options.quick,
      delays: options.latency,
      peers: options.peerIds,
      pgUrl: given ?? server!.url,
      log,
    });
    console.log(`\n${peersMarkdown(results)}`);
    const full = !options.quick && !given && !options.peerIds;
    const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
    announce(
      writePassReports('peers', results.meta.startedAt, results, () => peersMarkdown(results), places),
      full,
      'a run of every lock, not --quick, on its own PostgreSQL',
    );
    if (results.speed.rows.some((row) => row.peer === 'ours' && row.overlaps > 0)) process.exitCode = 1;
  } finally {
    await server?.destroy();
  }
}

/**
 * The fence's cost: the same transaction fenced and unfenced on a throwaway PostgreSQL (or
 * DATABASE_URL's). The committed copy (docs/bench/latest-fence.*) only when not --quick, on its own server.
 */
async function fenceCost(options: BenchOptions, log: (line: string) => void, docsDir: string): Promise<void> {
  log('fence pass: one transaction unfenced, with PgFence.check, and through PgFence.transaction, side by side');
  const given = process.env.DATABASE_URL;
  const server = given ? undefined : new PgServer();
  try {
    await server?.start();
    const counts = options.quick ? QUICK_FENCE_COUNTS : FENCE_COUNTS;
    const results = await measureFenceCost(given ?? server!.url, counts, { external: !!given, quick: options.quick });
    console.log(`\n${fenceMarkdown(results)}`);
    const full = !options.quick && !given;
    const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
    announce(writeFenceReports(results, places), full, 'a run not --quick, on its own PostgreSQL');
  } finally {
    await server?.destroy();
  }
}

/** The loopback passes: standalone, then (in a full run or with --ensemble) the ensemble. */
async function loopback(options: BenchOptions, log: (line: string) => void, docsDir: string): Promise<void> {
  // The ensemble pass starts its own servers and workers once the standalone pass has stopped its own.
  const standalone = options.ensemble === 'only' ? undefined : await runBench({ ...options, log });
  if (options.ensemble !== 'no') log('ensemble pass: scenarios 1 and 2 on a 3-server loopback ensemble');
  const ensemble = options.ensemble === 'no' ? undefined : await runBench({ ...options, log }, { ensemble: true });
  const results = standalone ? { ...standalone, ensemble } : ensemble!;
  console.log(`\n${consoleReport(results)}\n`);
  // The committed copy (docs/bench) only from full runs on the benchmark's own server.
  const full =
    !options.quick &&
    options.scenarios.length === ALL_SCENARIOS.length &&
    !results.meta.server.external &&
    standalone !== undefined;
  const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
  announce(writeReports(results, places), full, 'a full run (all scenarios, not --quick, own server)');
  if (results.problems.length || results.ensemble?.problems.length) process.exitCode = 1;
}

/**
 * One pass per --latency delay, each on a server of its own (or ZK_CONNECT's) with its own
 * delay proxy. The committed copy (docs/bench/latest-latency.*) only when every latency
 * scenario ran, not --quick, on the benchmark's own server.
 */
async function latency(options: BenchOptions, log: (line: string) => void, docsDir: string): Promise<void> {
  const passes: BenchResults[] = [];
  for (const latencyMs of options.latency) {
    log(`latency pass: scenarios ${LATENCY_SCENARIOS.join(', ')} at ${latencyMs} ms each way`);
    passes.push(await runBench({ ...options, log }, { latencyMs }));
  }
  const results: LatencyResults = { schema: 1, kind: 'latency', passes };
  console.log(`\n${consoleLatencyReport(results)}\n`);
  const full =
    !options.quick &&
    LATENCY_SCENARIOS.every((s) => options.scenarios.includes(s)) &&
    passes.every((pass) => !pass.meta.server.external);
  const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
  announce(
    writeLatencyReports(results, places),
    full,
    'a run of scenarios 1, 2, 7 and 8, not --quick, on its own server',
  );
  if (passes.some((pass) => pass.problems.length)) process.exitCode = 1;
}

/**
 * The capacity pass: the capacity scenarios selected, on a 3-server ensemble of its own (or
 * ZK_CONNECT's servers), sessions spread over every server. The committed copy
 * (docs/bench/latest-capacity.*) only when every capacity scenario ran, not --quick, on its own ensemble.
 */
async function capacity(options: BenchOptions, log: (line: string) => void, docsDir: string): Promise<void> {
  const registered = SCENARIOS.filter((s) => CAPACITY_SCENARIOS.includes(s.id)).map((s) => s.id);
  log(
    `capacity pass: scenarios ${registered.filter((s) => options.scenarios.includes(s)).join(', ')}, sessions spread over every server`,
  );
  const results = await runBench({ ...options, log }, { capacity: true });
  console.log(`\n${consoleCapacityReport(results)}\n`);
  const full =
    !options.quick && registered.every((s) => options.scenarios.includes(s)) && !results.meta.server.external;
  const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
  announce(
    writeCapacityReports(results, places),
    full,
    `a run of scenarios ${registered.join(', ')}, not --quick, on its own ensemble`,
  );
  if (results.problems.length) process.exitCode = 1;
}

/**
 * The partition pass (--partitions): ours and Kazoo's SetPartitioner on a server of its
 * own (or ZK_CONNECT's). The committed copy (docs/bench/latest-partitions.*) only when
 * not --quick, on its own server.
 */
async function partitions(options: BenchOptions, log: (line: string) => void, docsDir: string): Promise<void> {
  const results = await runPartitionPass({ connectionString: options.connectionString, quick: options.quick, log });
  console.log(`\n${partitionTable(results).join('\n')}\n`);
  const full = !options.quick && !results.meta.external;
  const places = { resultsDir: join(ROOT, 'bench-results'), docsDir: full ? docsDir : undefined };
  announce(writePartitionReports(results, places), full, 'a run not --quick on its own server');
  if (results.rows.some((row) => row.overlaps > 0)) process.exitCode = 1;
}

/** What was written, and why the committed copy was not when it was not. */
function announce(written: readonly string[], full: boolean, needed: string): void {
  console.log(`written: ${written.map((p) => relative(ROOT, p)).join(', ')}`);
  if (!full) console.log(`docs/bench not updated: only ${needed} writes its committed copy`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
