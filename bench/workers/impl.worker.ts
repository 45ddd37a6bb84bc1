import { createInterface } from 'node:readline';
import { ownCpuNs, type BenchImpl } from '../impl/bench-impl.js';
import type { ImplName, ReadyLine, WorkerOp } from './impl.protocol.js';

/**
 * A Node worker hosting one implementation (`ours` or `raw`) for the benchmark
 * orchestrator. Usage: node -r ./scripts/ts-register.cjs
 * bench/workers/impl.worker.ts <ours|raw> <connectionString> <baseZnode> [warmupMs]
 * Protocol: bench/workers/impl.protocol.ts.
 */

async function load(impl: string, connectionString: string, base: string): Promise<BenchImpl> {
  if (impl === 'ours') return new (await import('../impl/ours.impl.js')).OursImpl(connectionString, base);
  if (impl === 'raw') return new (await import('../impl/raw.impl.js')).RawImpl(connectionString, base);
  throw new Error(`unknown implementation "${impl}" (ours or raw)`);
}

function send(message: object): void {
  process.stdout.write(JSON.stringify(message) + '\n');
}

async function main(): Promise<void> {
  const [impl, connectionString, base, warmupMs] = process.argv.slice(2);
  const target = await load(impl, connectionString, base);
  await warmUpWorker(target, Number(warmupMs ?? 0));
  const ready: ReadyLine = { ready: true, impl: impl as ImplName, pid: process.pid, version: target.version };
  send(ready);
  // One request at a time, in order; the orchestrator never needs two at once from one worker.
  let queue = Promise.resolve();
  const lines = createInterface({ input: process.stdin });
  const quit = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      const { id, op, params } = JSON.parse(line) as { id: number; op: WorkerOp; params: unknown };
      if (op === 'quit') return resolve();
      queue = queue.then(async () => {
        try {
          if (op === 'clock') return send({ id, result: { now: String(process.hrtime.bigint()) } });
          if (op === 'cpu') return send({ id, result: { cpuNs: String(ownCpuNs()) } });
          const handler = target.ops[op];
          if (!handler) throw new Error(`${op} is not supported by ${impl}`);
          send({ id, result: await handler(params) });
        } catch (error) {
          send({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        }
      });
    });
    lines.on('close', resolve);
  });
  await quit;
  await queue;
  await target.close();
  lines.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

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
