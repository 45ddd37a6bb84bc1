import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ReentrantLocker } from '../../lib/core/reentrancy/reentrant-locker.js';
import { LockTimeoutError } from '../../lib/core/errors/errors.js';
import type { LockHandle } from '../../lib/core/port/lock-backend.js';
import { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import { addCounts, countsDelta } from '../support/request-counts.js';
import type {
  CapacityGoParams,
  CapacitySetupParams,
  Counts,
  DrainGoResult,
  DrainSetupParams,
  HandoffCloseResult,
  HandoffOpenParams,
  HeldLocksParams,
  HeldLocksResult,
  HoldResult,
  IdleParams,
  ManyLocksParams,
  ManyLocksResult,
  ReadHeavyParams,
  ReadHeavyResult,
  ReentrantParams,
  ReentrantResult,
  ReleaseResult,
  SessionsHoldParams,
  SessionsOpenParams,
  UncontendedParams,
  UncontendedResult,
} from '../workers/impl.protocol.js';
import type { LeasesParams, MultiLockParams } from '../workers/recipe-ops.protocol.js';
import { counts, now, range, type BenchImpl, type OursSessions } from './bench-impl.js';
import { CapacitySessions } from './capacity-sessions.js';
import { oursCapacitySession } from './ours-capacity.op.js';
import { runHeapProbe } from './ours-heap.probe.js';
import { oursIdle } from './ours-idle.op.js';
import { oursLeases } from './ours-leases.op.js';
import { oursMultiLock } from './ours-multi-lock.op.js';
import { SessionFleet } from './ours-sessions.op.js';

/**
 * This library, through its public API and default options only (whatever lib/ does when
 * the benchmark runs). Each op opens its own client(s), so one op's background work (such
 * as directory clean-up) never lands in another op's counters.
 */
export class OursImpl implements BenchImpl {
  readonly version: string;
  private readonly open = new Set<ZkLockBackend>();
  private handoff: { backend: ZkLockBackend; start: Counts; handle?: LockHandle } | undefined;
  private drain: { backends: ZkLockBackend[]; holder: LockHandle; ends: Promise<bigint>[] } | undefined;
  private readonly fleet: SessionFleet;

  constructor(
    private readonly connectionString: string,
    private readonly rootPath: string,
  ) {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    this.version = `nestjs-zk-lock ${version}`;
    this.fleet = new SessionFleet(this.sessions, connectionString, rootPath);
  }

  readonly ops = {
    uncontended: (p: UncontendedParams) => this.uncontended(p),
    'handoff.open': (p: HandoffOpenParams) => this.handoffOpen(p),
    'handoff.hold': (p: HandoffOpenParams) => this.handoffHold(p),
    'handoff.release': () => this.handoffRelease(),
    'handoff.close': () => this.handoffClose(),
    'drain.setup': (p: DrainSetupParams) => this.drainSetup(p),
    'drain.go': () => this.drainGo(),
    manyLocks: (p: ManyLocksParams) => this.manyLocks(p),
    reentrant: (p: ReentrantParams) => this.reentrant(p),
    readHeavy: (p: ReadHeavyParams) => this.readHeavy(p),
    multiLock: (p: MultiLockParams) => oursMultiLock(this.sessions, p),
    leases: (p: LeasesParams) => oursLeases(this.sessions, p),
    'capacity.setup': (p: CapacitySetupParams) => this.capacity.setup(p),
    'capacity.go': (p: CapacityGoParams) => this.capacity.go(p),
    'capacity.close': () => this.capacity.close(),
    idle: (p: IdleParams) =>
      oursIdle(
        (sessionTimeoutMs) => this.connect({ sessionTimeoutMs, removeEmptyDirectories: false }),
        (backend) => this.closeBackend(backend),
        this.connectionString,
        p,
      ),
    'sessions.open': (p: SessionsOpenParams) => this.fleet.open(p),
    'sessions.hold': (p: SessionsHoldParams) => this.fleet.hold(p),
    'sessions.release': () => this.fleet.release(),
    'sessions.stats': () => this.fleet.stats(),
    'sessions.close': () => this.fleet.close(),
    heldLocks: ({ prefix, locks, batch }: HeldLocksParams): Promise<HeldLocksResult> =>
      runHeapProbe(this.connectionString, this.rootPath, { prefix, locks, batch, warm: batch, server: true }),
  };

  private readonly sessions: OursSessions = {
    open: (server) => this.connect({ connectionString: server }),
    close: (backend) => this.closeBackend(backend),
  };

  private readonly capacity = new CapacitySessions((server, name) => oursCapacitySession(this.sessions, server, name));

  async close(): Promise<void> {
    await this.fleet.stop();
    await Promise.allSettled([...this.open].map((backend) => this.closeBackend(backend)));
  }

  private async uncontended({ name, cycles, warmup }: UncontendedParams): Promise<UncontendedResult> {
    const backend = await this.connect();
    try {
      for (let i = 0; i < warmup; i++) await (await backend.acquire(name)).release();
      const before = counts(backend);
      const start = now();
      for (let i = 0; i < cycles; i++) await (await backend.acquire(name)).release();
      const elapsedNs = Number(now() - start);
      return { cycles, elapsedNs, counts: countsDelta(before, counts(backend)) };
    } finally {
      await this.closeBackend(backend);
    }
  }

  private async handoffOpen(_: HandoffOpenParams): Promise<object> {
    const backend = await this.connect();
    this.handoff = { backend, start: counts(backend) };
    return {};
  }

  private async handoffHold({ name }: HandoffOpenParams): Promise<HoldResult> {
    const state = this.handoff!;
    state.handle = await state.backend.acquire(name);
    return { grantedAt: String(now()) };
  }

  private async handoffRelease(): Promise<ReleaseResult> {
    const state = this.handoff!;
    const releasedAt = now();
    await state.handle!.release();
    state.handle = undefined;
    return { releasedAt: String(releasedAt) };
  }

  private async handoffClose(): Promise<HandoffCloseResult> {
    const { backend, start } = this.handoff!;
    this.handoff = undefined;
    const result = { counts: countsDelta(start, counts(backend)) };
    await this.closeBackend(backend);
    return result;
  }

  private async drainSetup({ name, waiters }: DrainSetupParams): Promise<object> {
    const backends = await Promise.all(range(waiters + 1).map(() => this.connect()));
    const holder = await backends[0].acquire(name);
    // Each waiter releases as soon as it is granted; its release end time marks its turn done.
    const ends = backends.slice(1).map(async (backend) => {
      await (await backend.acquire(name)).release();
      return now();
    });
    for (const end of ends) end.catch(() => undefined); // reported by drain.go
    this.drain = { backends, holder, ends };
    return {};
  }

  private async drainGo(): Promise<DrainGoResult> {
    const { backends, holder, ends } = this.drain!;
    this.drain = undefined;
    try {
      const before = backends.map(counts);
      const start = now();
      await holder.release();
      const last = (await Promise.all(ends)).reduce((a, b) => (a > b ? a : b));
      const delta: Counts = {};
      backends.forEach((backend, i) => addCounts(delta, countsDelta(before[i], counts(backend))));
      return { drainNs: Number(last - start), counts: delta };
    } finally {
      await Promise.allSettled(backends.map((backend) => this.closeBackend(backend)));
    }
  }

  private async manyLocks({ prefix, locks, cyclesPerLock, measureMemory }: ManyLocksParams): Promise<ManyLocksResult> {
    const backend = await this.connect();
    try {
      const names = range(locks).map((i) => `${prefix}-${i}`);
      const before = counts(backend);
      const start = now();
      await Promise.all(
        names.map(async (name) => {
          for (let c = 0; c < cyclesPerLock; c++) await (await backend.acquire(name)).release();
        }),
      );
      const elapsedNs = Number(now() - start);
      const delta = countsDelta(before, counts(backend));
      // In a process of its own: its forced collections would cool this worker's JIT (ours-heap.probe.ts).
      const heapPerLockBytes = measureMemory
        ? (
            await runHeapProbe(this.connectionString, this.rootPath, {
              prefix: `${prefix}-heap`,
              locks,
              batch: locks,
              warm: locks,
              server: false,
            })
          ).heapPerLockBytes
        : null;
      return { cycles: locks * cyclesPerLock, elapsedNs, counts: delta, heapPerLockBytes };
    } finally {
      await this.closeBackend(backend);
    }
  }

  private async reentrant({ name, calls, warmup }: ReentrantParams): Promise<ReentrantResult> {
    const backend = await this.connect();
    try {
      const locker = new ReentrantLocker(backend, 10_000);
      const nothing = (): undefined => undefined;
      return await locker.withLock(name, async () => {
        for (let i = 0; i < warmup; i++) await locker.withLock(name, nothing);
        const before = counts(backend);
        const start = now();
        for (let i = 0; i < calls; i++) await locker.withLock(name, nothing);
        const elapsedNs = Number(now() - start);
        return { calls, elapsedNs, counts: countsDelta(before, counts(backend)) };
      });
    } finally {
      await this.closeBackend(backend);
    }
  }

  private async readHeavy({
    name,
    readers,
    durationMs,
    writerPauseMs,
    stallTimeoutMs,
  }: ReadHeavyParams): Promise<ReadHeavyResult> {
    const backends = await Promise.all(range(readers + 1).map(() => this.connect()));
    try {
      const writer = backends[readers];
      let stopped = false;
      let readerCycles = 0;
      let countedCycles = 0;
      let readerStalls = 0;
      let writerStalls = 0;
      const writerWaitsNs: number[] = [];
      const before = backends.map(counts);
      const start = now();
      const loops = backends.slice(0, readers).map(async (backend) => {
        while (!stopped) {
          const handle = await stalled(backend.acquire(name, { mode: 'read', timeoutMs: stallTimeoutMs }));
          if (!handle) {
            readerStalls++;
            continue;
          }
          await handle.release();
          if (!stopped) readerCycles++;
          countedCycles++;
        }
      });
      loops.push(
        (async () => {
          for (;;) {
            await sleep(writerPauseMs);
            if (stopped) return;
            const asked = now();
            const handle = await stalled(writer.acquire(name, { timeoutMs: stallTimeoutMs }));
            writerWaitsNs.push(Number(now() - asked));
            if (!handle) {
              writerStalls++;
              continue;
            }
            await handle.release();
            countedCycles++;
          }
        })(),
      );
      await sleep(durationMs);
      stopped = true;
      const elapsedNs = Number(now() - start);
      await Promise.all(loops);
      const delta: Counts = {};
      backends.forEach((backend, i) => addCounts(delta, countsDelta(before[i], counts(backend))));
      return { readerCycles, elapsedNs, writerWaitsNs, readerStalls, writerStalls, counts: delta, countedCycles };
    } finally {
      await Promise.allSettled(backends.map((backend) => this.closeBackend(backend)));
    }
  }

  private async connect(
    options: { sessionTimeoutMs?: number; removeEmptyDirectories?: boolean; connectionString?: string } = {},
  ): Promise<ZkLockBackend> {
    const backend = await ZkLockBackend.connect({
      ...options,
      connectionString: options.connectionString ?? this.connectionString,
      rootPath: this.rootPath,
    });
    this.open.add(backend);
    return backend;
  }

  private async closeBackend(backend: ZkLockBackend): Promise<void> {
    this.open.delete(backend);
    await backend.close();
  }
}

/** The handle, or null when the acquire gave up after its timeout. */
async function stalled(acquire: Promise<LockHandle>): Promise<LockHandle | null> {
  try {
    return await acquire;
  } catch (error) {
    if (error instanceof LockTimeoutError) return null;
    throw error;
  }
}
