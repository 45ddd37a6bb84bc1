import type { BenchImpl } from '../impl/bench-impl.js';
import type { WorkerOp } from './impl.protocol.js';

/**
 * Runs every recipe path `impl` has in a loop for `ms` before the worker's ready line, as
 * the Curator worker does (CuratorBenchWorker.warmUp): V8 too starts each function in its
 * interpreter and optimizes it only after many calls, more than the runner's one warm-up
 * round (hundreds of cycles) makes. Names carry the pid: two workers of one
 * implementation warm up at once.
 */
export async function warmUpWorker(impl: BenchImpl, ms: number): Promise<void> {
  const tag = `warmup-${process.pid}`;
  const steps: Array<[WorkerOp, object]> = [
    ['uncontended', { name: `${tag}-u`, cycles: 200, warmup: 0 }],
    ['multiLock', { prefix: `${tag}-m`, locks: 5, cycles: 20, warmup: 0 }],
    ['leases', { name: `${tag}-l`, contenders: 4, maxLeases: 2, holdMs: 0, warmupGrants: 0, grants: 100 }],
    ['readHeavy', { name: `${tag}-r`, readers: 4, durationMs: 300, writerPauseMs: 5, stallTimeoutMs: 500 }],
  ];
  const until = performance.now() + ms;
  while (performance.now() < until) for (const [op, params] of steps) await impl.ops[op]?.(params);
}
