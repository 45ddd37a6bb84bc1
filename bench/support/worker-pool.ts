import type { ScenarioCounts } from '../options.js';
import type { Scenario } from '../scenarios/scenario.js';
import type { ImplName } from '../workers/impl.protocol.js';
import { WorkerChannel } from './worker-channel.js';
import type { WorkerSpawns } from './worker-spawn.js';

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
    const started = await Promise.allSettled(
      [...slots].flatMap(([impl, count]) =>
        Array.from({ length: count }, async (_, slot) => {
          const { channel, ready } = await WorkerChannel.start(
            await spawns.spawn(impl, slot, connectionString, baseOf(impl)),
          );
          pool.workers.set(`${impl}#${slot}`, channel);
          pool.versions[impl] = ready.version;
        }),
      ),
    );
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
