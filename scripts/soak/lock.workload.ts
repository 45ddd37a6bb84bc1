import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

import { LockAbortedError, LockTimeoutError, LockUnavailableError, type LockMode } from '../../lib/index.js';
import type { SoakClient } from './client.pool.js';

/** What the cycles did, summed over every worker. */
export interface WorkloadStats {
  granted: number;
  /** tryAcquire answered null, or ifLocked: 'skip' skipped: the lock was taken by someone else. */
  busy: number;
  /** Grants that came after waiting behind another holder (longer than WAITED_MS). */
  waited: number;
  timedOut: number;
  aborted: number;
  /** A try (or a wait's deadline) that met a dropped connection: LockUnavailableError, expected around the forced drops. */
  unavailable: number;
  /** A writer beside any other holder, seen by the holders themselves. */
  exclusionViolations: number;
  /** Anything else thrown: the first few messages. */
  errors: string[];
  errorCount: number;
  byOp: Record<string, number>;
}

const WAITED_MS = 2;
/** Long enough never to run out under this load; a wait this long is reported as an error. */
const WAIT_MS = 10_000;

/** Who holds which name right now, in this process: every client runs here, so exclusion can be checked directly. */
class Holders {
  private readonly byName = new Map<string, { writers: number; readers: number }>();
  constructor(private readonly stats: WorkloadStats) {}

  enter(name: string, mode: LockMode): () => void {
    const h = this.byName.get(name) ?? { writers: 0, readers: 0 };
    this.byName.set(name, h);
    if (h.writers > 0 || (mode === 'write' && h.readers > 0)) this.stats.exclusionViolations++;
    if (mode === 'write') h.writers++;
    else h.readers++;
    return () => (mode === 'write' ? h.writers-- : h.readers--);
  }
}

/** mulberry32: a small seeded generator, so a run's operation mix can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Op = (c: SoakClient, random: () => number) => Promise<void>;

/**
 * One lock cycle per call, on a few shared names so that clients queue behind each other:
 * withLock (write, read, nested), tryAcquire, acquire/release on the backend, acquireAll,
 * withLocks, ifLocked 'skip', and waits cut short by a timeout or an abort.
 */
export class LockWorkload {
  readonly stats: WorkloadStats = {
    granted: 0,
    busy: 0,
    waited: 0,
    timedOut: 0,
    unavailable: 0,
    aborted: 0,
    exclusionViolations: 0,
    errors: [],
    errorCount: 0,
    byOp: {},
  };
  private readonly holders = new Holders(this.stats);
  private readonly ops: ReadonlyArray<[weight: number, name: string, op: Op]>;
  private readonly total: number;

  constructor(private readonly names: readonly string[]) {
    this.ops = [
      [
        22,
        'withLock',
        (c, r) =>
          c.locker.withLock(this.pick(r), (h) => this.hold(h.name, h.mode, r), {
            mode: this.mode(r),
            timeoutMs: WAIT_MS,
          }),
      ],
      [
        8,
        'nested',
        (c, r) =>
          c.locker.withLock(
            this.pick(r),
            (h) => c.locker.withLock(h.name, () => this.hold(h.name, 'write', r), { mode: 'read' }),
            { timeoutMs: WAIT_MS },
          ),
      ],
      [14, 'tryAcquire', (c, r) => this.tryAcquire(c, r)],
      [16, 'acquire', (c, r) => this.acquire(c, r, WAIT_MS)],
      [12, 'acquireAll', (c, r) => this.acquireAll(c, r)],
      [8, 'withLocks', (c, r) => this.withLocks(c, r)],
      [8, 'skip', (c, r) => this.skip(c, r)],
      [6, 'timeout', (c, r) => this.acquire(c, r, 1)],
      [6, 'abort', (c, r) => this.abort(c, r)],
    ];
    this.total = this.ops.reduce((sum, [w]) => sum + w, 0);
  }

  /** Runs one cycle; expected refusals (busy, timeout, abort) are counted, anything else recorded. */
  async cycle(client: SoakClient, random: () => number): Promise<void> {
    let roll = random() * this.total;
    const [, name, op] = this.ops.find(([w]) => (roll -= w) < 0) ?? this.ops[0];
    this.stats.byOp[name] = (this.stats.byOp[name] ?? 0) + 1;
    try {
      await op(client, random);
    } catch (error) {
      if (error instanceof LockTimeoutError) this.stats.timedOut++;
      else if (error instanceof LockAbortedError) this.stats.aborted++;
      else if (error instanceof LockUnavailableError) this.stats.unavailable++;
      else {
        if (this.stats.errors.length < 5)
          this.stats.errors.push(
            `${name}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          );
        this.stats.errorCount++;
      }
    }
  }

  private pick(random: () => number): string {
    return this.names[Math.floor(random() * this.names.length)];
  }

  private mode(random: () => number): LockMode {
    return random() < 0.4 ? 'read' : 'write';
  }

  /** The body of every grant: check exclusion, keep the lock a moment (a turn, or ~1 ms now and then). */
  private async hold(
    name: string | readonly string[],
    mode: LockMode | readonly LockMode[],
    random: () => number,
  ): Promise<void> {
    this.stats.granted++;
    const names = typeof name === 'string' ? [name] : name;
    const leave = names.map((n, i) => this.holders.enter(n, typeof mode === 'string' ? mode : mode[i]));
    try {
      await (random() < 0.25 ? sleep(1) : nextTurn());
    } finally {
      for (const l of leave) l();
    }
  }

  private async acquire(c: SoakClient, random: () => number, timeoutMs: number): Promise<void> {
    const started = performance.now();
    const lock = await c.backend.acquire(this.pick(random), { mode: this.mode(random), timeoutMs });
    if (performance.now() - started > WAITED_MS) this.stats.waited++;
    try {
      await this.hold(lock.name, lock.mode, random);
    } finally {
      await lock.release();
    }
  }

  private async tryAcquire(c: SoakClient, random: () => number): Promise<void> {
    const lock = await c.locker.tryAcquire(this.pick(random), { mode: this.mode(random) });
    if (!lock) return void this.stats.busy++;
    try {
      await this.hold(lock.name, lock.mode, random);
    } finally {
      await lock.release();
    }
  }

  private async skip(c: SoakClient, random: () => number): Promise<void> {
    const ran = await c.locker.withLock(
      this.pick(random),
      async (h) => (await this.hold(h.name, h.mode, random), true),
      { mode: this.mode(random), ifLocked: 'skip' },
    );
    if (ran === undefined) this.stats.busy++;
  }

  /** Aborted by the caller one turn after it asked: sometimes granted by then, usually not. */
  private async abort(c: SoakClient, random: () => number): Promise<void> {
    const controller = new AbortController();
    const asked = c.backend.acquire(this.pick(random), {
      mode: this.mode(random),
      timeoutMs: WAIT_MS,
      signal: controller.signal,
    });
    await nextTurn();
    controller.abort();
    const lock = await asked;
    try {
      await this.hold(lock.name, lock.mode, random);
    } finally {
      await lock.release();
    }
  }

  /** Two distinct names in a random order, the second one read. */
  private pair(random: () => number): [{ name: string; mode: LockMode }, { name: string; mode: LockMode }] {
    const first = this.pick(random);
    let second = this.pick(random);
    while (second === first) second = this.pick(random);
    return [
      { name: first, mode: 'write' },
      { name: second, mode: 'read' },
    ];
  }

  private async acquireAll(c: SoakClient, random: () => number): Promise<void> {
    const started = performance.now();
    const group = await c.locker.acquireAll(this.pair(random), { timeoutMs: WAIT_MS });
    if (performance.now() - started > WAITED_MS) this.stats.waited++;
    try {
      await this.hold(
        group.names,
        group.handles.map((h) => h.mode),
        random,
      );
    } finally {
      await group.release();
    }
  }

  private async withLocks(c: SoakClient, random: () => number): Promise<void> {
    await c.locker.withLocks(
      this.pair(random),
      (group) =>
        this.hold(
          group.names,
          group.handles.map((h) => h.mode),
          random,
        ),
      { timeoutMs: WAIT_MS },
    );
  }
}
