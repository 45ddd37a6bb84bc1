import type { TcpProxy } from '../support/tcp-proxy';
import type { WorkerProcess } from '../support/worker-process';

/** The small pieces the chaos test (chaos.spec.ts) and its faults (chaos-faults.ts) share. */

export const now = (): bigint => process.hrtime.bigint(); // the workers' clock: CLOCK_MONOTONIC, ns
export const MS = 1_000_000n;

export interface Worker {
  readonly name: string;
  /** One proxy per server: `blackhole()` and `stop()` cut this worker off alone. */
  readonly proxies: TcpProxy[];
  incarnation: number;
  process: WorkerProcess;
  /** The last session it reported connecting with. */
  credentials?: { sessionId: Buffer; sessionPassword: Buffer };
}

export const processOf = (w: Worker): string => `${w.name}.${w.incarnation}`;

export interface Rng {
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: small, fast, and enough to replay a fault schedule from a 32-bit seed. */
export function prng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

export type Step = <T>(what: string, work: Promise<T>, timeoutMs: number) => Promise<T>;

/** Runs one step with a deadline, so that the test always ends by itself; the error names the seed. */
export function stepper(seed: number): Step {
  return async (what, work, timeoutMs) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`chaos step "${what}" took more than ${timeoutMs} ms (seed ${seed})`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
