import { countsOf, movedParts, PartitionChecker, type PartEvent } from '../support/partition-checker';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';

// Members in processes of their own on one ZooKeeper: a crash (kill -9), a graceful
// leave (SIGTERM) and a join, checked over every change event every member reported.

const SESSION_MS = 4000;
const PARTS = 20;
const SETTLE_MS = 500;

interface Line {
  readonly hr: string;
  readonly event: string;
  readonly assigned?: number[];
  readonly revoked?: number[];
  readonly lost?: number[];
  readonly parts?: number[];
  readonly tokens?: Record<string, string>;
}

/** The events a worker's line reports, for the checker. */
function eventsIn(member: string, line: Line): PartEvent[] {
  const at = BigInt(line.hr);
  const of = (kind: PartEvent['kind'], parts: number[] = []): PartEvent[] =>
    parts.map((part) => ({
      member,
      at,
      kind,
      part: String(part),
      ...(kind === 'assigned' && { token: BigInt(line.tokens![part]) }),
    }));
  if (line.event === 'drained') return of('drained', line.parts);
  if (line.event !== 'change') return [];
  return [...of('assigned', line.assigned), ...of('revoked', line.revoked), ...of('lost', line.lost)];
}

describe('Partitioner across processes', () => {
  const rootPath = uniqueRoot('partitioner-processes');
  const checker = new PartitionChecker();
  const workers = new Map<string, WorkerProcess>();
  afterAll(async () => {
    await Promise.all([...workers.values()].map((worker) => worker.kill()));
  });

  function spawn(memberId: string): WorkerProcess {
    const worker = WorkerProcess.spawn('partition-member.worker.ts', {
      connectionString: zkConnect(),
      rootPath,
      sessionTimeoutMs: SESSION_MS,
      group: 'shards',
      memberId,
      partitions: PARTS,
      settleMs: SETTLE_MS,
      drainMs: 200,
    });
    worker.onLine((line) => checker.add(...eventsIn(memberId, JSON.parse(line) as Line)));
    workers.set(memberId, worker);
    return worker;
  }

  const balancedOver = (members: string[], what: string): Promise<void> =>
    waitUntil(
      () => {
        const owners = checker.owners();
        const counts = countsOf(owners, members);
        return (
          owners.size === PARTS &&
          Math.max(...counts) - Math.min(...counts) <= 1 &&
          [...owners.values()].every((o) => members.includes(o))
        );
      },
      what,
      60_000,
    );

  it('three members share the parts; a join moves only what the newcomer takes', async () => {
    for (const id of ['m1', 'm2', 'm3']) await spawn(id).line((l) => l.includes('"started"'), 'started', 60_000);
    await balancedOver(['m1', 'm2', 'm3'], 'three share');
    const before = checker.owners();
    await spawn('m4').line((l) => l.includes('"started"'), 'started', 60_000);
    await balancedOver(['m1', 'm2', 'm3', 'm4'], 'four share');
    const after = checker.owners();
    const moved = movedParts(before, after);
    expect(moved.every((part) => after.get(part) === 'm4')).toBe(true);
    expect(moved.length).toBeLessThanOrEqual(Math.ceil(PARTS / 4));
    expect(checker.violations({ drains: true })).toEqual([]);
  });

  it("a crash (kill -9) moves only the crashed member's parts, owned again once its session expired and settleMs passed", async () => {
    const before = checker.owners();
    const crashed = [...before].filter(([, owner]) => owner === 'm2').map(([part]) => part);
    await workers.get('m2')!.kill();
    // Nothing of it runs any more: its ownerships end now.
    const at = process.hrtime.bigint();
    checker.add(...crashed.map((part) => ({ member: 'm2', at, kind: 'lost' as const, part })));
    await balancedOver(['m1', 'm3', 'm4'], "the others own the crashed member's parts");
    const after = checker.owners();
    expect(movedParts(before, after).sort()).toEqual([...crashed].sort());
    expect(checker.violations({ drains: true })).toEqual([]);
  });

  it("a graceful leave (SIGTERM) moves only the leaver's parts; tokens rose with every new owner", async () => {
    const before = checker.owners();
    const leaver = workers.get('m3')!;
    leaver.signal('SIGTERM');
    await leaver.line((l) => l.includes('"stopped"'), 'stopped', 60_000);
    await balancedOver(['m1', 'm4'], 'two share');
    const after = checker.owners();
    expect(movedParts(before, after).every((part) => before.get(part) === 'm3')).toBe(true);
    expect(checker.violations({ drains: true })).toEqual([]);
    expect(checker.events.filter((e) => e.kind === 'assigned').length).toBeGreaterThan(PARTS);
  });
});
