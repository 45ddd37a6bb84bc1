import { nodePrefix, rawCycle, type RawZk } from '../raw-client.loop.js';

/**
 * Runs the JVM's JIT of the server paths every scenario uses (create, getChildren,
 * delete) hot before round 1: `chains` concurrent uncontended loops on one session for
 * `durationMs`. Returns the cycles done.
 */
export async function warmUpServer(zk: RawZk, root: string, durationMs: number, chains = 64): Promise<number> {
  const dirs = Array.from({ length: chains }, (_, i) => `${root}/warmup/${i}`);
  await Promise.all(dirs.map((dir) => zk.mkdirp(dir)));
  const until = Date.now() + durationMs;
  let cycles = 0;
  await Promise.all(
    dirs.map(
      (dir) =>
        new Promise<void>((resolve, reject) => {
          const prefix = nodePrefix();
          const next = (error: Error | null): void => {
            if (error) return reject(error);
            if (Date.now() >= until) return resolve();
            cycles++;
            rawCycle(zk, dir, prefix, next);
          };
          next(null);
        }),
    ),
  );
  return cycles;
}
