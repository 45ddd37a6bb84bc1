import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { CAPACITY_SCENARIOS, ENSEMBLE_SCENARIOS, LATENCY_SCENARIOS, type BenchOptions } from './options.js';
import type { BenchMeta, BenchResults } from './results.js';
import { capacityTargets, ensembleTargets, evaluateTargets, latencyTargets } from './report/targets.js';
import { SCENARIOS } from './scenarios/all-scenarios.js';
import type { TargetServer } from './scenarios/scenario.js';
import { runRounds, type RoundRecords, type RoundsSetup } from './rounds.js';
import { clientCpuRows, processCpuNs } from './support/cpu.js';
import { DelayProxy } from './support/delay-proxy.js';
import { measureNetwork } from './support/network-ping.js';
import { QueueProbe } from './support/queue-probe.js';
import { serverState } from './support/server-state.js';
import { warmUpServer } from './raw-client.js';
import type { WorkerChannel } from './support/worker-channel.js';
import { WorkerPool } from './support/worker-pool.js';
import { WorkerSpawns } from './support/worker-spawn.js';
import { openZkTarget, type ZkTarget } from './support/zookeeper-target.js';
import type { ClockResult, ImplName } from './workers/impl.protocol.js';

const ROOT = join(__dirname, '..');

/**
 * Runs the selected scenarios for every implementation, interleaved (see `runRounds`), in
 * one pool of workers or a fresh pool per scenario (`freshWorkers`). Returns every sample
 * plus medians, side-by-side ratios, round trips and targets. Starts (and stops) its own
 * ZooKeeper unless `connectionString` names one; all its znodes live under a fresh
 * `/bench-…` root.
 * `pass.ensemble`: on a 3-server ensemble it starts, scenarios 1 and 2 only, with the
 * ensemble's targets. `pass.latencyMs`: scenarios 1, 2, 7 and 8 only, every worker reaching
 * the server through one delay proxy (a process of its own) that holds each chunk that long
 * in each direction, with the latency targets. `pass.capacity`: the capacity scenarios only
 * (no other pass runs them), on a 3-server ensemble it starts (or ZK_CONNECT's servers),
 * sessions spread over every server, with the capacity targets.
 */
export async function runBench(
  options: BenchOptions,
  pass: { ensemble?: boolean; latencyMs?: number; capacity?: boolean } = {},
): Promise<BenchResults> {
  const startedAt = new Date();
  const log = options.log ?? (() => undefined);
  const ensemble = pass.ensemble === true;
  const capacity = pass.capacity === true;
  const { latencyMs } = pass;
  const only = ensemble ? ENSEMBLE_SCENARIOS : latencyMs !== undefined ? LATENCY_SCENARIOS : undefined;
  const scenarios = SCENARIOS.filter(
    (s) =>
      options.scenarios.includes(s.id) &&
      (!only || only.includes(s.id)) &&
      capacity === CAPACITY_SCENARIOS.includes(s.id),
  );
  const loadavgStart = loadavg();
  const target = await openZkTarget({
    connectionString: ensemble ? undefined : options.connectionString,
    serverPids: options.serverPids,
    forceSync: options.forceSync,
    ensemble: ensemble || capacity,
    spread: capacity,
  });
  const root = `/bench-${startedAt.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
  // The Curator and Node workers run their recipes before their ready line as long as the server warms up.
  const spawns = new WorkerSpawns(options.serverWarmupMs);
  let probe: QueueProbe | undefined;
  let pool: WorkerPool | undefined;
  let proxy: DelayProxy | undefined;
  try {
    // The orchestrator's probe and warm-up talk to the server directly; only the workers are delayed.
    probe = await QueueProbe.open(target.connectionString);
    const serverVersion = await probe.serverVersion();
    log(
      `ZooKeeper ${serverVersion} at ${target.connectionString}: ${target.topology}${target.external ? '' : `, forceSync=${target.forceSync ? 'yes' : 'no'}`}; znodes under ${root}`,
    );
    if (latencyMs !== undefined) {
      proxy = await DelayProxy.start(target.connectionString, latencyMs);
      log(`latency pass: every worker through a delay proxy at ${proxy.connectionString}, ${latencyMs} ms each way`);
    }
    const workersConnectTo = proxy?.connectionString ?? target.connectionString;
    const servers = await targetServers(target);
    const serverCpuNs = (): number => processCpuNs(target.serverPids());
    const versions: BenchMeta['versions'] & Partial<Record<ImplName, string>> = { node: process.version };
    const clockChecks: BenchMeta['clockChecks'] = [];
    const records: RoundRecords = { samples: {}, cpuSpans: {}, order: [] };
    const baseOf = (impl: ImplName): string => `${root}/${impl}`;
    const setup: RoundsSetup = {
      plan: [
        ...Array.from({ length: options.warmupRounds }, (_, i) => ({ label: `w${i + 1}`, n: i + 1, measured: false })),
        ...Array.from({ length: options.rounds }, (_, i) => ({ label: `r${i + 1}`, n: i + 1, measured: true })),
      ],
      rounds: options.rounds,
      warmupRounds: options.warmupRounds,
      context: {
        counts: options.counts,
        probe,
        base: baseOf,
        servers,
        serverCpuNs: () => (target.serverPids().length ? serverCpuNs() : null),
        serverPids: () => target.serverPids(),
      },
      serverCpuNs,
      log,
    };
    // One pool of workers for the whole run, or (--fresh-workers) a fresh one per scenario, as JMH forks.
    const groups = options.freshWorkers ? scenarios.map((s) => [s]) : [scenarios];
    for (const [i, group] of groups.entries()) {
      pool = await WorkerPool.start(spawns, group, options.counts, workersConnectTo, baseOf);
      Object.assign(versions, pool.versions);
      clockChecks.push(...(await checkClocks(pool.all())));
      if (i === 0 && options.serverWarmupMs > 0) {
        const cycles = await warmUpServer(probe.zk, root, options.serverWarmupMs);
        log(`server warm-up: ${cycles} raw cycles in ${options.serverWarmupMs} ms`);
      }
      if (options.freshWorkers) log(`fresh workers for scenario ${group[0].id}`);
      await runRounds(setup, group, pool, records);
      await pool.stop();
      pool = undefined;
    }
    const { samples, cpuSpans, order } = records;
    const network = proxy && (await measureNetwork(probe.zk, proxy, root));

    const summaries = scenarios.map((s) => s.summarize((samples[s.key] ?? {}) as never));
    const metrics = summaries.flatMap((s) => s.metrics);
    const roundTrips = summaries.flatMap((s) => s.roundTrips);
    const targets = ensemble
      ? ensembleTargets(metrics)
      : latencyMs !== undefined
        ? latencyTargets(metrics, latencyMs)
        : capacity
          ? capacityTargets(metrics)
          : evaluateTargets(metrics, target);
    const clientCpu = clientCpuRows(
      cpuSpans,
      new Map(scenarios.map((s) => [s.id, s.title])),
      target.serverPids().length > 0,
    );
    const finishedAt = new Date();
    const meta: BenchMeta = {
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      runtimeSec: (finishedAt.getTime() - startedAt.getTime()) / 1e3,
      argv: process.argv.slice(2),
      rounds: options.rounds,
      warmupRounds: options.warmupRounds,
      serverWarmupMs: options.serverWarmupMs,
      quick: options.quick,
      scenarios: scenarios.map((s) => s.id),
      server: {
        external: target.external,
        forceSync: target.forceSync,
        tickTime: target.tickTime,
        jvmArgs: target.jvmArgs,
        version: serverVersion,
        topology: target.topology,
      },
      versions,
      source: sourceState(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadavgStart, loadavgEnd: loadavg() },
      queueProbe:
        probe.mode === 'pause' ? 'a 25 ms pause (the server refused wchc)' : "the server's watch table (wchc)",
      clockChecks,
      freshWorkers: options.freshWorkers,
      ...(capacity && { servers: servers.map(({ address, mode }) => ({ address, mode })) }),
      order,
      ...(network && { network }),
    };
    return {
      schema: 1,
      ...(capacity && { kind: 'capacity' as const }),
      meta,
      counts: options.counts,
      samples,
      metrics,
      roundTrips,
      clientCpu,
      targets,
      problems: summaries.flatMap((s) => s.problems),
    };
  } finally {
    await pool?.stop();
    await proxy?.stop();
    await spawns.dispose();
    if (probe) {
      if (target.external) await probe.zk.removeTree(root).catch(() => undefined); // an own server is deleted whole
      await probe.close();
    }
    await target.stop();
  }
}

/** Every server of the target with its mode now (null if `srvr` did not say) and, when known, its CPU. */
async function targetServers(target: ZkTarget): Promise<TargetServer[]> {
  return Promise.all(
    target.servers.map(async ({ address, pid }) => ({
      address,
      mode: await serverState(address).then(
        (state) => state.mode,
        () => null,
      ),
      cpuNs: () => {
        const id = pid();
        return id === undefined ? null : processCpuNs([id]);
      },
    })),
  );
}

/** The commit checked out and the files under lib/ that differ from it: what "ours" was. */
function sourceState(): BenchMeta['source'] {
  const git = (...args: string[]): string | null => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const status = git('status', '--porcelain', '--', 'lib');
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    libChangedFiles: status === null ? null : status.split('\n').filter(Boolean).length,
  };
}

/**
 * Cross-process latencies subtract one process's CLOCK_MONOTONIC reading from another's.
 * Proof that they share the clock: each worker's reading falls between two of ours.
 */
async function checkClocks(workers: readonly WorkerChannel[]): Promise<BenchMeta['clockChecks']> {
  const checks: BenchMeta['clockChecks'] = [];
  for (const channel of workers) {
    const before = process.hrtime.bigint();
    const { now } = await channel.request<ClockResult>('clock');
    const after = process.hrtime.bigint();
    const theirs = BigInt(now);
    checks.push({
      worker: channel.label,
      ok: before <= theirs && theirs <= after,
      windowUs: Number(after - before) / 1e3,
    });
  }
  const bad = checks.filter((c) => !c.ok);
  if (bad.length)
    throw new Error(
      `worker clocks are not this process's CLOCK_MONOTONIC: ${bad.map((c) => c.worker).join(', ')}; cross-process latencies would be meaningless`,
    );
  return checks;
}
