import type { BenchMeta, BenchResults } from './results.js';
import type { Scenario, ScenarioContext } from './scenarios/scenario.js';
import { addSpans, measuredCpu, type CpuSpan } from './support/cpu.js';
import { shuffled } from './support/sample-stats.js';
import type { WorkerPool } from './support/worker-pool.js';
import type { ImplName } from './workers/impl.protocol.js';

export interface Round {
  /** "w1" for warm-up round 1, "r3" for measured round 3: part of lock names. */
  readonly label: string;
  readonly n: number;
  readonly measured: boolean;
}

/** What the rounds add to, across every call (one per worker pool). */
export interface RoundRecords {
  readonly samples: BenchResults['samples'];
  readonly cpuSpans: Record<number, Partial<Record<ImplName, CpuSpan[]>>>;
  readonly order: BenchMeta['order'];
}

export interface RoundsSetup {
  readonly plan: readonly Round[];
  readonly rounds: number;
  readonly warmupRounds: number;
  readonly context: Omit<ScenarioContext, 'round' | 'worker'>;
  readonly serverCpuNs: () => number;
  readonly log: (line: string) => void;
}

/**
 * Runs `scenarios` for every round of the plan on `pool`'s workers: per round, per
 * scenario, per slice, the implementations in a fresh random order, so that machine noise
 * at any moment hits all of them alike. Measured rounds go into `records`.
 */
export async function runRounds(
  setup: RoundsSetup,
  scenarios: readonly Scenario[],
  pool: WorkerPool,
  records: RoundRecords,
): Promise<void> {
  for (const round of setup.plan) {
    const ctx: ScenarioContext = {
      ...setup.context,
      round: round.label,
      worker: (impl, slot) => pool.worker(impl, slot),
    };
    for (const scenario of scenarios) {
      const slices = scenario.slices?.(ctx.counts) ?? 1;
      const parts = new Map<ImplName, unknown[]>(scenario.impls.map((impl) => [impl, []]));
      const spans = new Map<ImplName, CpuSpan>();
      for (let slice = 0; slice < slices; slice++) {
        const impls = shuffled(scenario.impls);
        if (round.measured) records.order.push({ round: round.n, scenario: scenario.id, slice: slice + 1, impls });
        for (const impl of impls) {
          const { result, span } = await measuredCpu(pool.workersOf(impl), setup.serverCpuNs, () =>
            scenario.run(ctx, impl, slice),
          );
          parts.get(impl)!.push(result);
          spans.set(impl, addSpans(spans.get(impl), span));
        }
      }
      for (const impl of scenario.impls) {
        const list = parts.get(impl)!;
        const sample = scenario.merge ? scenario.merge(list) : list[0];
        const when = round.measured ? `round ${round.n}/${setup.rounds}` : `warm-up ${round.n}/${setup.warmupRounds}`;
        setup.log(`${when}  ${scenario.id}. ${scenario.key.padEnd(11)} ${impl.padEnd(5)} ${scenario.describe(sample)}`);
        if (round.measured) {
          ((records.samples[scenario.key] ??= {})[impl] ??= []).push(sample);
          ((records.cpuSpans[scenario.id] ??= {})[impl] ??= []).push(spans.get(impl)!);
        }
      }
    }
  }
}
