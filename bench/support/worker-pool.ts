import type { ScenarioCounts } from '../options.js';
import type { Scenario } from '../scenarios/scenario.js';
import type { ImplName } from '../workers/impl.protocol.js';
import { WorkerChannel } from './worker-channel.js';
import type { WorkerSpawns } from './worker-spawn.js';

/** Workers started at once, at most. */
const MAX_STARTING = 8;

/**
 * The worker processes some scenarios need: one per implementation, two where the
 * handoff needs them, more for the capacity scenario, each warmed (see `WorkerSpawns`)
 * before its ready line.
 */
export class WorkerPool {
  private constructor(
    private readonly workers: Map<string, WorkerChannel>,
    /** Each implementation's version, from its ready line. */
    readonly versions: Partial<Record<ImplName, string>>,
  ) {}

  /** Starts them all; if one fails, stops the others (all settled first, so none is left starting). */
  static async start(
    spawns: WorkerSpawns,
    scenarios: readonly Scenario[],
    counts: ScenarioCounts,
    connectionString: string,
    baseOf: (impl: ImplName) => string,
  ): Promise<WorkerPool> {
    const slots = new Map<ImplName, number>();
    for (const s of scenarios) {
      const needed = typeof s.slots === 'number' ? s.slots : s.slots(counts);
      for (const impl of s.impls) slots.set(impl, Math.max(slots.get(impl) ?? 0, needed));
    }
    const pool = new WorkerPool(new Map(), {});
    const wanted = [...slots].flatMap(([impl, count]) => Array.from({ length: count }, (_, slot) => ({ impl, slot })));
    const started: Array<PromiseSettledResult<void>> = [];
    // Each worker warms up for a while before its ready line: the capacity scenario's fifteen
    // at once missed their ready timeout on a busy 2-core machine, so no more start at once
    // than the handoff's eight.
    let next = 0;
    const starter = async (): Promise<void> => {
      while (next < wanted.length) {
        const { impl, slot } = wanted[next++];
        const start = async (): Promise<void> => {
          const { channel, ready } = await WorkerChannel.start(
            await spawns.spawn(impl, slot, connectionString, baseOf(impl)),
          );
          pool.workers.set(`${impl}#${slot}`, channel);
          pool.versions[impl] = ready.version;
        };
        started.push(...(await Promise.allSettled([start()])));
      }
    };
    await Promise.all(Array.from({ length: Math.min(MAX_STARTING, wanted.length) }, starter));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await pool.stop();
      throw failed.reason;
    }
    return pool;
  }

  /** Slot 0 for everything, slot 1 the second process of the handoff, … */
  worker(impl: ImplName, slot = 0): WorkerChannel {
    const channel = this.workers.get(`${impl}#${slot}`);
    if (!channel) throw new Error(`no worker ${impl}#${slot + 1}`);
    return channel;
  }

  /** Every worker process of `impl` (two for the handoff, more for the capacity scenario). */
  workersOf(impl: ImplName): WorkerChannel[] {
    return [...this.workers].filter(([key]) => key.startsWith(`${impl}#`)).map(([, channel]) => channel);
  }

  all(): WorkerChannel[] {
    return [...this.workers.values()];
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.all().map((w) => w.stop()));
  }
}
