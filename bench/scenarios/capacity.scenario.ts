import { setTimeout as sleep } from 'node:timers/promises';

import type { MetricRow } from '../results.js';
import { addCounts } from '../support/request-counts.js';
import { lastZxid } from '../support/server-state.js';
import type { CapacityGoResult, Counts, ImplName } from '../workers/impl.protocol.js';
import {
  metricRow,
  roundTripRows,
  type SamplesByImpl,
  type Scenario,
  type ScenarioContext,
  type TargetServer,
} from './scenario.js';

/** Scenario 10 at one number of clients C, in one round, for one implementation. */
export interface CapacityPoint {
  readonly clients: number;
  /** Worker processes the C sessions ran in. */
  readonly processes: number;
  /** Cycles that ended within the window, per second of it. */
  readonly cyclesPerSec: number;
  /** Every cycle of the loops, warm-up and wind-down included: the requests and transactions are over these. */
  readonly cycles: number;
  readonly counts: Counts;
  /** Transactions the ensemble committed (its zxid's growth) over the loops, per cycle. */
  readonly txPerCycle: number;
  /** The servers' CPU over the window, per cycle (µs), and in cores busy; null when their processes are not known. */
  readonly serverCpuUsPerCycle: number | null;
  readonly serverCores: number | null;
  /** The leader's share of the servers' CPU over the window; null unless each server's process is known. */
  readonly leaderShare: number | null;
  /** The client processes' CPU over the window, per cycle (µs), and in cores busy. */
  readonly clientCpuUsPerCycle: number;
  readonly clientCores: number;
}

/** One round of scenario 10: a point per number of clients, smallest first. */
export interface CapacitySample {
  readonly points: CapacityPoint[];
}

/** One session of the layout: its number (its lock is `<prefix>-<index>`) and the server it connects to. */
export interface PlacedSession {
  readonly index: number;
  readonly server: string;
}

/**
 * Where C sessions run: session i in worker process i mod P (P = `processes`, or C when
 * smaller) and on server i mod S. Every implementation gets the same layout, and the sessions
 * spread over the servers as production clients spread over an ensemble.
 */
export function spreadSessions(clients: number, processes: number, servers: readonly string[]): PlacedSession[][] {
  const perProcess: PlacedSession[][] = Array.from({ length: Math.min(processes, clients) }, () => []);
  for (let i = 0; i < clients; i++)
    perProcess[i % perProcess.length].push({ index: i, server: servers[i % servers.length] });
  return perProcess;
}

/**
 * 10. C sessions, each looping uncontended acquire + release on a lock of its own, all at
 * once, spread over worker processes and over the ensemble's servers (`spreadSessions`):
 * the cycles per second the ensemble sustains, the transactions each cycle commits and the
 * CPU each costs the servers and the clients. Each number of clients is a slice, the
 * implementations taking turns.
 */
export const capacityScenario: Scenario<CapacitySample> = {
  id: 10,
  key: 'capacity',
  title: 'capacity: C clients on distinct locks',
  impls: ['ours', 'raw', 'curator'],
  slots: (counts) => counts.capacity.processes,

  async run(ctx, impl, slice) {
    return { points: [await capacityPoint(ctx, impl, ctx.counts.capacity.clients[slice])] };
  },

  slices: (counts) => counts.capacity.clients.length,

  merge: (parts) => ({ points: parts.flatMap((part) => part.points) }),

  describe: (s) =>
    s.points
      .map((p) => `C=${p.clients} ${p.cyclesPerSec.toFixed(0)} cycles/s ${p.txPerCycle.toFixed(2)} tx`)
      .join('; '),

  summarize(samples) {
    const sizes = [
      ...new Set(Object.values(samples).flatMap((list) => list.flatMap((s) => s.points.map((p) => p.clients)))),
    ];
    sizes.sort((a, b) => a - b);
    const at = (clients: number): SamplesByImpl<CapacityPoint> => {
      const out: SamplesByImpl<CapacityPoint> = {};
      for (const [impl, list] of Object.entries(samples) as Array<[ImplName, CapacitySample[]]>)
        out[impl] = list.flatMap((s) => s.points.filter((p) => p.clients === clients));
      return out;
    };
    // Each figure for every number of clients in a row, so that how it grows reads down the table.
    const metrics = FIGURES.flatMap((figure) => sizes.flatMap((clients) => figureRow(figure, clients, at(clients))));
    const [fewest, most] = [sizes[0], sizes[sizes.length - 1]];
    if (sizes.length > 1)
      metrics.push(
        metricRow({
          id: 'capacity.scaling',
          scenario: 10,
          label: `cycles/s with ${most} clients ÷ with ${fewest} (same round)`,
          unit: '×',
          better: 'higher',
          rounds: rounded(samples, (s) => {
            const rate = (n: number) => s.points.find((p) => p.clients === n)?.cyclesPerSec ?? null;
            const [a, b] = [rate(most), rate(fewest)];
            return a === null || b === null ? null : a / b;
          }),
          ratios: false,
        }),
      );
    const empty = sizes.flatMap((clients) =>
      (Object.entries(at(clients)) as Array<[ImplName, CapacityPoint[]]>)
        .filter(([, points]) => points.some((p) => p.cyclesPerSec === 0))
        .map(([impl]) => `capacity, ${onDistinctLocks(clients)}: ${impl} ended no cycle within the window`),
    );
    return {
      metrics,
      roundTrips: sizes.flatMap((clients) =>
        roundTripRows(10, `cycle (${onDistinctLocks(clients)})`, at(clients), (p) => ({
          counts: p.counts,
          units: p.cycles,
        })),
      ),
      problems: empty,
    };
  },
};

/** "1 client on distinct locks", "50 clients on distinct locks": the rows' and targets' words. */
export function onDistinctLocks(clients: number): string {
  return `${clients} client${clients === 1 ? '' : 's'} on distinct locks`;
}

/** A figure of every point: its metric id's tail, label, unit, and whether ours ÷ the others means anything. */
interface Figure {
  readonly id: string;
  readonly label: string;
  readonly unit: string;
  readonly better: MetricRow['better'];
  readonly ratios: boolean;
  value(p: CapacityPoint): number | null;
}

const FIGURES: readonly Figure[] = [
  {
    id: 'cyclesPerSec',
    label: 'cycles',
    unit: 'cycles/s',
    better: 'higher',
    ratios: true,
    value: (p) => p.cyclesPerSec,
  },
  {
    id: 'txPerCycle',
    label: 'transactions per cycle (zxid)',
    unit: 'tx/cycle',
    better: 'lower',
    ratios: false,
    value: (p) => p.txPerCycle,
  },
  {
    id: 'serverCpuUsPerCycle',
    label: "servers' CPU per cycle",
    unit: 'µs/cycle',
    better: 'lower',
    ratios: true,
    value: (p) => p.serverCpuUsPerCycle,
  },
  {
    id: 'clientCpuUsPerCycle',
    label: "clients' CPU per cycle",
    unit: 'µs/cycle',
    better: 'lower',
    ratios: true,
    value: (p) => p.clientCpuUsPerCycle,
  },
  {
    id: 'serverCores',
    label: "servers' CPU",
    unit: 'cores',
    better: 'lower',
    ratios: false,
    value: (p) => p.serverCores,
  },
  {
    id: 'clientCores',
    label: "clients' CPU",
    unit: 'cores',
    better: 'lower',
    ratios: false,
    value: (p) => p.clientCores,
  },
  {
    id: 'leaderShare',
    label: "the leader's share of the servers' CPU",
    unit: '%',
    better: 'lower',
    ratios: false,
    value: (p) => (p.leaderShare === null ? null : p.leaderShare * 100),
  },
];

/** The row of one figure at one number of clients; none when no implementation has it in every round. */
function figureRow(figure: Figure, clients: number, points: SamplesByImpl<CapacityPoint>): MetricRow[] {
  const rounds = rounded(points, (p) => figure.value(p));
  if (Object.keys(rounds).length === 0) return [];
  return [
    metricRow({
      id: `capacity.${clients}.${figure.id}`,
      scenario: 10,
      label: `${onDistinctLocks(clients)}: ${figure.label}`,
      unit: figure.unit,
      better: figure.better,
      rounds,
      ratios: figure.ratios,
    }),
  ];
}

/** `value` of each sample per implementation, over rounds; an implementation with a null in any round is left out. */
function rounded<S>(samples: SamplesByImpl<S>, value: (s: S) => number | null): Partial<Record<ImplName, number[]>> {
  const out: Partial<Record<ImplName, number[]>> = {};
  for (const [impl, list] of Object.entries(samples) as Array<[ImplName, S[]]>) {
    const values = list.map(value);
    if (values.length && values.every((v) => v !== null)) out[impl] = values as number[];
  }
  return out;
}

/**
 * One number of clients for one implementation: the sessions opened where `spreadSessions`
 * puts them, one loop of all of them with a window `warmupMs` after its start, the
 * ensemble's zxid read before and after the loop (leader's, or the first server's), and
 * the servers' CPU read at the window's ends as the workers read their own.
 */
async function capacityPoint(ctx: ScenarioContext, impl: ImplName, clients: number): Promise<CapacityPoint> {
  const { processes, warmupMs, durationMs } = ctx.counts.capacity;
  const layout = spreadSessions(
    clients,
    processes,
    ctx.servers.map((s) => s.address),
  );
  const workers = layout.map((_, slot) => ctx.worker(impl, slot));
  const prefix = `capacity-${ctx.round}-${clients}`;
  try {
    await Promise.all(workers.map((w, slot) => w.request('capacity.setup', { prefix, sessions: layout[slot] })));
    const counted = (ctx.servers.find((s) => s.mode === 'leader') ?? ctx.servers[0]).address;
    const zxidBefore = await lastZxid(counted);
    const windowStart = process.hrtime.bigint() + BigInt(warmupMs) * 1_000_000n;
    const windowEnd = windowStart + BigInt(durationMs) * 1_000_000n;
    const window = { windowStartNs: String(windowStart), windowEndNs: String(windowEnd) };
    const [results, servers] = await Promise.all([
      Promise.all(workers.map((w) => w.request<CapacityGoResult>('capacity.go', window))),
      serverCpuOver(ctx.servers, () => ctx.serverCpuNs(), windowStart, windowEnd),
    ]);
    const transactions = Number((await lastZxid(counted)) - zxidBefore);
    const sum = (value: (r: CapacityGoResult) => number): number => results.reduce((n, r) => n + value(r), 0);
    const cyclesPerSec = sum((r) => r.windowCycles) / (durationMs / 1e3);
    const perCycle = (cores: number): number => (cores * 1e6) / cyclesPerSec; // µs of CPU per cycle
    const clientCores = sum((r) => r.windowCpuNs / r.windowSampledNs);
    return {
      clients,
      processes: workers.length,
      cyclesPerSec,
      cycles: sum((r) => r.cycles),
      counts: results.reduce((all, r) => addCounts(all, r.counts), {} as Counts),
      txPerCycle: transactions / sum((r) => r.cycles),
      serverCpuUsPerCycle: servers.cores === null ? null : perCycle(servers.cores),
      serverCores: servers.cores,
      leaderShare: servers.leaderShare,
      clientCpuUsPerCycle: perCycle(clientCores),
      clientCores,
    };
  } finally {
    await Promise.allSettled(workers.map((w) => w.request('capacity.close')));
  }
}

/** The servers' CPU between two readings taken at `start` and `end`: cores busy, and the leader's share. */
async function serverCpuOver(
  servers: readonly TargetServer[],
  total: () => number | null,
  start: bigint,
  end: bigint,
): Promise<{ cores: number | null; leaderShare: number | null }> {
  const read = async (at: bigint) => {
    await sleep(Math.max(0, Number(at - process.hrtime.bigint()) / 1e6));
    return { at: process.hrtime.bigint(), total: total(), each: servers.map((s) => s.cpuNs()) };
  };
  const first = await read(start);
  const last = await read(end);
  if (first.total === null || last.total === null) return { cores: null, leaderShare: null };
  const used = last.total - first.total;
  const leader = servers.findIndex((s) => s.mode === 'leader');
  const [a, b] = [first.each[leader], last.each[leader]];
  return {
    cores: used / Number(last.at - first.at),
    leaderShare: leader < 0 || a === null || b === null || used <= 0 ? null : (b - a) / used,
  };
}
