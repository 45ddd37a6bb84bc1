import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

import { RawZk } from '../raw-client.js';
import { openZkTarget } from '../support/zookeeper-target.js';
import { changeMetrics, type ChangeMetrics, type OwnershipEvent } from './partition-metrics.js';

const ROOT = join(__dirname, '..', '..');
const PYTHON = '/usr/bin/python3';

export type PartitionImpl = 'ours' | 'kazoo';
export type PartitionStep = 'join' | 'leave' | 'crash';
export const PARTITION_IMPLS: readonly PartitionImpl[] = ['ours', 'kazoo'];
export const PARTITION_STEPS: readonly PartitionStep[] = ['join', 'leave', 'crash'];

export interface PartitionCounts {
  /** Parts of the group, `0…parts-1`. */
  readonly parts: number;
  /** Members after a join, before a leave or a crash. */
  readonly members: number;
  /** Each member's session timeout (the same for both), ms: a crashed member's parts wait for it. */
  readonly sessionTimeoutMs: number;
  /** How long no member may report a change for the group to count as settled, ms. */
  readonly quietMs: number;
}

export const FULL_PARTITION_COUNTS: PartitionCounts = { parts: 64, members: 5, sessionTimeoutMs: 4000, quietMs: 1500 };
export const QUICK_PARTITION_COUNTS: PartitionCounts = { parts: 8, members: 3, sessionTimeoutMs: 4000, quietMs: 500 };

export interface PartitionRow extends ChangeMetrics {
  readonly impl: PartitionImpl;
  readonly step: PartitionStep;
  /** How long the reshuffle lasted: from the first ownership change the step caused (for a crash: the kill) to the last, ms. */
  readonly settledMs: number;
}

export interface PartitionResults {
  readonly schema: 1;
  readonly kind: 'partitions';
  readonly quick: boolean;
  readonly counts: PartitionCounts;
  /** How each implementation was configured, for the report. */
  readonly settings: Record<PartitionImpl, string>;
  readonly meta: {
    readonly startedAt: string;
    /** The znode every member's nodes were under (removed afterwards from an existing server). */
    readonly base: string;
    readonly zookeeper: string;
    readonly external: boolean;
    readonly machine: { readonly cpus: number; readonly loadavgStart: number[]; readonly loadavgEnd: number[] };
  };
  readonly rows: PartitionRow[];
}

/** A member process, and every ownership it reported. */
class Member {
  owned: readonly number[] = [];
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  private stderr = '';

  constructor(
    readonly id: string,
    private readonly child: ChildProcessWithoutNullStreams,
    events: OwnershipEvent[],
  ) {
    let ready!: () => void;
    this.ready = new Promise((resolve) => (ready = resolve));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const report = JSON.parse(line) as { hr: string; owned?: number[]; event?: string };
      if (report.event === 'ready') ready();
      if (!report.owned) return;
      this.owned = report.owned;
      events.push({ hr: BigInt(report.hr), member: id, owned: report.owned });
    });
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get lastWords(): string {
    return this.stderr.trim() || '(no stderr)';
  }

  stop(): void {
    this.child.stdin.end('stop\n');
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/** One implementation's group: its members, started and stopped as the steps need. */
class Group {
  readonly events: OwnershipEvent[] = [];
  readonly members = new Map<string, Member>();

  constructor(
    private readonly impl: PartitionImpl,
    private readonly connectionString: string,
    private readonly base: string,
    private readonly counts: PartitionCounts,
  ) {}

  async add(id: string): Promise<Member> {
    const { parts, sessionTimeoutMs } = this.counts;
    const [command, args] =
      this.impl === 'kazoo'
        ? [
            PYTHON,
            [join(ROOT, 'bench/kazoo/kazoo_partitioner.worker.py'), this.connectionString, `${this.base}/kazoo`, id],
          ]
        : [
            process.execPath,
            [
              '-r',
              join(ROOT, 'scripts/ts-register.cjs'),
              join(ROOT, 'bench/partitions/ours-member.worker.ts'),
              this.connectionString,
              `${this.base}/ours`,
              'bench',
              id,
            ],
          ];
    const child = spawn(command, [...args, String(parts), String(sessionTimeoutMs), '0'], { cwd: ROOT, stdio: 'pipe' });
    const member = new Member(id, child, this.events);
    this.members.set(id, member);
    await Promise.race([
      member.ready,
      member.exited.then(() => {
        throw new Error(`${this.impl} member ${id} exited before it was ready: ${member.lastWords}`);
      }),
    ]);
    return member;
  }

  /** Each live member's ownership now. */
  snapshot(): Map<string, readonly number[]> {
    return new Map([...this.members].filter(([, m]) => m.alive).map(([id, m]) => [id, m.owned]));
  }

  /**
   * Waits until `expected` members own every part once, balanced within 1, and no member
   * reported a change for `quietMs`; returns the time of the last change.
   */
  async settled(expected: readonly string[], since: bigint): Promise<bigint> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const last = this.events.reduce((a, e) => (e.hr > a ? e.hr : a), since);
      const quiet = process.hrtime.bigint() - last >= BigInt(this.counts.quietMs) * 1_000_000n;
      if (quiet && this.balanced(expected)) return last;
      if (Date.now() > deadline)
        throw new Error(
          `${this.impl}: the group did not settle on ${expected.join(', ')} in 120 s: ${JSON.stringify([...this.snapshot()])}`,
        );
      await sleep(50);
    }
  }

  private balanced(expected: readonly string[]): boolean {
    const counts = expected.map((id) => this.members.get(id)?.owned.length ?? 0);
    const owners = new Array<number>(this.counts.parts).fill(0);
    for (const id of expected) for (const part of this.members.get(id)?.owned ?? []) owners[part]++;
    return owners.every((n) => n === 1) && Math.max(...counts) - Math.min(...counts) <= 1;
  }

  async close(): Promise<void> {
    for (const member of this.members.values()) if (member.alive) member.stop();
    await Promise.all([...this.members.values()].map((m) => m.exited));
  }
}

/**
 * The partition pass: for each implementation, a group of `members - 1` members, then a
 * join (the last member), a graceful leave (of that member), a join again (not measured),
 * and a crash (`kill -9` of that member), each measured from every member's reported
 * ownership. Both implementations run on the same server with the same session timeout
 * and no stabilisation window (`settleMs` 0, Kazoo's `time_boundary` 0).
 */
export async function runPartitionPass(options: {
  readonly connectionString?: string;
  readonly quick: boolean;
  readonly log: (line: string) => void;
}): Promise<PartitionResults> {
  const counts = options.quick ? QUICK_PARTITION_COUNTS : FULL_PARTITION_COUNTS;
  const loadavgStart = loadavg();
  const target = await openZkTarget({ connectionString: options.connectionString, forceSync: true });
  const base = `/bench-partitions-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const rows: PartitionRow[] = [];
  try {
    options.log(`partition pass: ${counts.parts} parts over ${counts.members} members on ${target.connectionString}`);
    for (const impl of PARTITION_IMPLS)
      rows.push(...(await runImpl(impl, target.connectionString, base, counts, options.log)));
  } finally {
    if (target.external) {
      const zk = await RawZk.connect(target.connectionString);
      await zk.removeTree(base).catch(() => undefined); // an own server is deleted whole
      await zk.close();
    }
    await target.stop();
  }
  return {
    schema: 1,
    kind: 'partitions',
    quick: options.quick,
    counts,
    settings: {
      ours: `Partitioner, settleMs 0, sessionTimeoutMs ${counts.sessionTimeoutMs}`,
      kazoo: `SetPartitioner, time_boundary 0, max_reaction_time 1 s (default), session timeout ${counts.sessionTimeoutMs / 1000} s`,
    },
    meta: {
      startedAt: new Date().toISOString(),
      base,
      zookeeper: target.external ? 'existing server (ZK_CONNECT)' : 'standalone server started by the benchmark',
      external: target.external,
      machine: { cpus: cpus().length, loadavgStart, loadavgEnd: loadavg() },
    },
    rows,
  };
}

async function runImpl(
  impl: PartitionImpl,
  connectionString: string,
  base: string,
  counts: PartitionCounts,
  log: (line: string) => void,
): Promise<PartitionRow[]> {
  const group = new Group(impl, connectionString, base, counts);
  const ids = Array.from({ length: counts.members }, (_, i) => `m${i + 1}`);
  const [rest, last] = [ids.slice(0, -1), ids.at(-1)!];
  const rows: PartitionRow[] = [];
  const measure = async (step: PartitionStep, change: () => Promise<unknown>, expected: string[]): Promise<void> => {
    const before = group.snapshot();
    const from = process.hrtime.bigint();
    await change();
    const to = await group.settled(expected, from);
    const metrics = changeMetrics(counts.parts, before, group.events, from, to);
    const first = group.events.filter((e) => e.hr > from).reduce((a, e) => (e.hr < a ? e.hr : a), to);
    const row = { impl, step, ...metrics, settledMs: Number(to - first) / 1e6 };
    log(`  ${impl} ${step}: ${JSON.stringify(row)}`);
    rows.push(row);
  };
  try {
    for (const id of rest) await group.add(id);
    await group.settled(rest, 0n);
    await measure('join', () => group.add(last), ids);
    await measure(
      'leave',
      async () => {
        group.members.get(last)!.stop();
        await group.members.get(last)!.exited;
      },
      rest,
    );
    await group.add(last);
    await group.settled(ids, 0n);
    await measure(
      'crash',
      async () => {
        const member = group.members.get(last)!;
        const at = process.hrtime.bigint();
        member.kill();
        // The crashed member owns nothing from the kill on.
        group.events.push({ hr: at, member: last, owned: [] });
        member.owned = [];
        await member.exited;
      },
      rest,
    );
  } finally {
    await group.close();
  }
  return rows;
}
