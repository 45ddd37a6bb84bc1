import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import type { ImplName } from '../workers/impl.protocol.js';
import type { WorkerChannel } from './worker-channel.js';

/** One implementation's run of one scenario: CPU its worker processes used, the ZooKeeper servers' CPU meanwhile, and the wall time it took. */
export interface CpuSpan {
  readonly cpuNs: number;
  readonly serverCpuNs: number;
  readonly wallNs: number;
}

/** How busy the client processes were while a scenario ran, by implementation. */
export interface ClientCpuRow {
  readonly scenario: number;
  readonly title: string;
  /** Median over rounds of CPU time ÷ wall time: 1 = one core busy the whole time. */
  readonly busy: Partial<Record<ImplName, number>>;
  /** The same for the ZooKeeper server processes while that implementation ran (absent for an external server). */
  readonly server?: Partial<Record<ImplName, number>>;
}

interface CpuAnswer {
  readonly cpuNs: string;
}

/**
 * Runs `work` and reports the CPU the given workers' processes used meanwhile (each
 * answers its own process's CPU time: Node `process.cpuUsage`, Python
 * `time.process_time_ns`, the JVM's `getProcessCpuTime`: every thread of the process).
 */
export async function measuredCpu<T>(
  workers: readonly WorkerChannel[],
  serverCpuNs: () => number,
  work: () => Promise<T>,
): Promise<{ result: T; span: CpuSpan }> {
  const cpu = async (): Promise<bigint> => {
    const answers = await Promise.all(workers.map((w) => w.request<CpuAnswer>('cpu')));
    return answers.reduce((sum, answer) => sum + BigInt(answer.cpuNs), 0n);
  };
  const cpuBefore = await cpu();
  const serverBefore = serverCpuNs();
  const wallBefore = process.hrtime.bigint();
  const result = await work();
  const wallNs = Number(process.hrtime.bigint() - wallBefore);
  const serverAfter = serverCpuNs();
  const cpuNs = Number((await cpu()) - cpuBefore);
  return { result, span: { cpuNs, serverCpuNs: serverAfter - serverBefore, wallNs } };
}

/** Adds spans up (a scenario's slices). */
export function addSpans(a: CpuSpan | undefined, b: CpuSpan): CpuSpan {
  return a ? { cpuNs: a.cpuNs + b.cpuNs, serverCpuNs: a.serverCpuNs + b.serverCpuNs, wallNs: a.wallNs + b.wallNs } : b;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The rows of the "client CPU" table, from the spans of every measured round. */
export function clientCpuRows(
  spans: Readonly<Record<number, Partial<Record<ImplName, CpuSpan[]>>>>,
  titles: ReadonlyMap<number, string>,
  serverMeasured: boolean,
): ClientCpuRow[] {
  return Object.entries(spans).map(([scenario, byImpl]) => {
    const busy: Partial<Record<ImplName, number>> = {};
    const server: Partial<Record<ImplName, number>> = {};
    for (const [impl, list] of Object.entries(byImpl) as Array<[ImplName, CpuSpan[]]>) {
      const timed = list.filter((s) => s.wallNs > 0);
      if (!timed.length) continue;
      busy[impl] = median(timed.map((s) => s.cpuNs / s.wallNs));
      if (serverMeasured) server[impl] = median(timed.map((s) => s.serverCpuNs / s.wallNs));
    }
    const row = { scenario: Number(scenario), title: titles.get(Number(scenario)) ?? '', busy };
    return serverMeasured ? { ...row, server } : row;
  });
}

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time (user + system, every thread, in ns) the given processes have used so far, read
 * from /proc: the ZooKeeper servers the benchmark started. Counted in the kernel's ticks
 * (10 ms at USER_HZ 100), so a figure over a second is good to about 1%. A process that is
 * gone counts 0.
 */
export function processCpuNs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // not running
    }
  }
  return (ticks * 1e9) / TICKS_PER_SECOND;
}
