import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  nodePrefix,
  rawAcquire,
  rawAcquireAsync,
  pipelinedCycle,
  rawCycle,
  rawRelease,
  rawReleaseAsync,
  RawZk,
} from '../raw-client.js';
import { addCounts, countsDelta } from '../support/request-counts.js';
import { WireSession } from '../support/wire-session.js';
import type {
  CapacityGoParams,
  CapacitySetupParams,
  Counts,
  DrainGoResult,
  DrainSetupParams,
  HandoffCloseResult,
  HandoffOpenParams,
  HoldResult,
  ManyLocksParams,
  ManyLocksResult,
  ReleaseResult,
  UncontendedParams,
  UncontendedResult,
} from '../workers/impl.protocol.js';
import type { MultiLockParams, MultiLockResult } from '../workers/recipe-ops.protocol.js';
import { now, range, type BenchImpl } from './bench-impl.js';
import { CapacitySessions, type CapacitySession } from './capacity-sessions.js';
import { rawMultiLock } from './raw-multi-lock.op.js';

/**
 * The floor: node-zookeeper-client 1.1.3 with plain callbacks, the bare recipe (create
 * EPHEMERAL_SEQUENTIAL, getChildren, delete; a waiter watches its blocker with getData),
 * serial within a lock, no pipelining. Lock directories are created before timing.
 */
export class RawImpl implements BenchImpl {
  readonly version: string;
  private readonly open = new Set<RawZk>();
  private handoff: { zk: RawZk; dir: string; prefix: string; start: Counts; path?: string } | undefined;
  private drain: { clients: RawZk[]; holder: string; ends: Promise<bigint>[] } | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly base: string,
  ) {
    const pkg = join(__dirname, '..', '..', 'node_modules', 'node-zookeeper-client', 'package.json');
    this.version = `node-zookeeper-client ${(JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version}`;
  }

  readonly ops = {
    uncontended: (p: UncontendedParams) => this.uncontended(p),
    'handoff.open': (p: HandoffOpenParams) => this.handoffOpen(p),
    'handoff.hold': () => this.handoffHold(),
    'handoff.release': () => this.handoffRelease(),
    'handoff.close': () => this.handoffClose(),
    'drain.setup': (p: DrainSetupParams) => this.drainSetup(p),
    'drain.go': () => this.drainGo(),
    manyLocks: (p: ManyLocksParams) => this.manyLocks(p),
    multiLock: (p: MultiLockParams) => this.multiLock(p),
    'capacity.setup': (p: CapacitySetupParams) => this.capacity.setup(p),
    'capacity.go': (p: CapacityGoParams) => this.capacity.go(p),
    'capacity.close': () => this.capacity.close(),
  };

  /** Scenario 10's sessions: each its own client on its server, the serial loop of scenario 1 on its own lock. */
  private readonly capacity = new CapacitySessions(async (server, name): Promise<CapacitySession> => {
    const zk = await this.connect(server);
    const dir = `${this.base}/${name}`;
    await zk.mkdirp(dir);
    const prefix = nodePrefix();
    return {
      cycle: (done) => rawCycle(zk, dir, prefix, done),
      counts: () => ({ ...zk.counts }),
      settled: async () => undefined, // each cycle's delete was answered before it ended
      close: () => this.closeClient(zk),
    };
  });

  async close(): Promise<void> {
    await Promise.allSettled([...this.open].map((zk) => this.closeClient(zk)));
  }

  private async uncontended({ name, cycles, warmup }: UncontendedParams): Promise<UncontendedResult> {
    const zk = await this.connect();
    try {
      const dir = `${this.base}/${name}`;
      await zk.mkdirp(dir);
      const prefix = nodePrefix();
      await serialCycles(zk, dir, prefix, warmup);
      const before = { ...zk.counts };
      const start = now();
      await serialCycles(zk, dir, prefix, cycles);
      const elapsedNs = Number(now() - start);
      const counts = countsDelta(before, zk.counts);
      await serialCycles(zk, dir, prefix, warmup, pipelinedCycle);
      const pipelinedStart = now();
      await serialCycles(zk, dir, prefix, cycles, pipelinedCycle);
      const pipelined = { cycles, elapsedNs: Number(now() - pipelinedStart) };
      const wire = await wireCycles(this.connectionString, dir, prefix, warmup, cycles);
      return { cycles, elapsedNs, counts, pipelined, wire };
    } finally {
      await this.closeClient(zk);
    }
  }

  private async handoffOpen({ name }: HandoffOpenParams): Promise<object> {
    const zk = await this.connect();
    const dir = `${this.base}/${name}`;
    await zk.mkdirp(dir);
    this.handoff = { zk, dir, prefix: nodePrefix(), start: { ...zk.counts } };
    return {};
  }

  private handoffHold(): Promise<HoldResult> {
    const state = this.handoff!;
    return new Promise((resolve, reject) =>
      rawAcquire(state.zk, state.dir, state.prefix, (error, path) => {
        const grantedAt = now(); // in the callback itself: nothing between the grant and the clock
        if (error) return reject(error);
        state.path = path;
        resolve({ grantedAt: String(grantedAt) });
      }),
    );
  }

  private handoffRelease(): Promise<ReleaseResult> {
    const state = this.handoff!;
    const path = state.path!;
    state.path = undefined;
    const releasedAt = now();
    return new Promise((resolve, reject) =>
      rawRelease(state.zk, path, (error) => (error ? reject(error) : resolve({ releasedAt: String(releasedAt) }))),
    );
  }

  private async handoffClose(): Promise<HandoffCloseResult> {
    const { zk, start } = this.handoff!;
    this.handoff = undefined;
    const result = { counts: countsDelta(start, zk.counts) };
    await this.closeClient(zk);
    return result;
  }

  private async drainSetup({ name, waiters }: DrainSetupParams): Promise<object> {
    const clients = await Promise.all(range(waiters + 1).map(() => this.connect()));
    const dir = `${this.base}/${name}`;
    await clients[0].mkdirp(dir);
    const holder = await rawAcquireAsync(clients[0], dir, nodePrefix());
    const ends = clients.slice(1).map(
      (zk) =>
        new Promise<bigint>((resolve, reject) =>
          rawAcquire(zk, dir, nodePrefix(), (error, path) => {
            if (error) return reject(error);
            rawRelease(zk, path!, (error2) => (error2 ? reject(error2) : resolve(now())));
          }),
        ),
    );
    for (const end of ends) end.catch(() => undefined); // reported by drain.go
    this.drain = { clients, holder, ends };
    return {};
  }

  private async drainGo(): Promise<DrainGoResult> {
    const { clients, holder, ends } = this.drain!;
    this.drain = undefined;
    try {
      const before = clients.map((zk) => ({ ...zk.counts }));
      const start = now();
      await rawReleaseAsync(clients[0], holder);
      const last = (await Promise.all(ends)).reduce((a, b) => (a > b ? a : b));
      const delta: Counts = {};
      clients.forEach((zk, i) => addCounts(delta, countsDelta(before[i], zk.counts)));
      return { drainNs: Number(last - start), counts: delta };
    } finally {
      await Promise.allSettled(clients.map((zk) => this.closeClient(zk)));
    }
  }

  private async manyLocks({ prefix, locks, cyclesPerLock }: ManyLocksParams): Promise<ManyLocksResult> {
    const zk = await this.connect();
    try {
      const dirs = range(locks).map((i) => `${this.base}/${prefix}-${i}`);
      await Promise.all(dirs.map((dir) => zk.mkdirp(dir)));
      const nodePrefixes = dirs.map(() => nodePrefix());
      const before = { ...zk.counts };
      const start = now();
      await Promise.all(dirs.map((dir, i) => serialCycles(zk, dir, nodePrefixes[i], cyclesPerLock)));
      const elapsedNs = Number(now() - start);
      return {
        cycles: locks * cyclesPerLock,
        elapsedNs,
        counts: countsDelta(before, zk.counts),
        heapPerLockBytes: null,
      };
    } finally {
      await this.closeClient(zk);
    }
  }

  private async multiLock(p: MultiLockParams): Promise<MultiLockResult> {
    const zk = await this.connect();
    try {
      return await rawMultiLock(zk, this.base, p);
    } finally {
      await this.closeClient(zk);
    }
  }

  private async connect(server = this.connectionString): Promise<RawZk> {
    const zk = await RawZk.connect(server);
    this.open.add(zk);
    return zk;
  }

  private async closeClient(zk: RawZk): Promise<void> {
    this.open.delete(zk);
    await zk.close();
  }
}

/**
 * The same cycles once more on a session spoken by hand (`WireSession`), on its own
 * session, after as many warm-up cycles: the timed part only.
 */
async function wireCycles(connectionString: string, dir: string, prefix: string, warmup: number, cycles: number) {
  const wire = await WireSession.connect(connectionString);
  try {
    const cycle = (next: (error: Error | null) => void): void => wire.cycle(dir, prefix, next);
    await repeat(warmup, cycle);
    const start = now();
    await repeat(cycles, cycle);
    return { cycles, elapsedNs: Number(now() - start) };
  } finally {
    await wire.close();
  }
}

/** `cycles` uncontended cycles one after another, callback to callback. */
function serialCycles(zk: RawZk, dir: string, prefix: string, cycles: number, cycle = rawCycle): Promise<void> {
  return repeat(cycles, (next) => cycle(zk, dir, prefix, next));
}

/** `step` `times` times, each after the last one's callback. */
function repeat(times: number, step: (next: (error: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = 0;
    const next = (error: Error | null): void => {
      if (error) return reject(error);
      if (done++ === times) return resolve();
      step(next);
    };
    next(null);
  });
}
