// What the loops of a chaos worker take (see chaos.worker.ts): the one lock, a random
// multi-lock, or a lease.
import type { ZkLockBackend } from '../../lib/index.js';
import { randomInt, type Grant } from './chaos-section';

export interface Workloads {
  /** The one lock, guarding a counter file. */
  readonly lock: { readonly name: string; readonly counter: string };
  /** `acquireAll` of `min` to `max` of `names`, listed in random order; a counter file per name. */
  readonly multi: {
    readonly names: readonly string[];
    readonly min: number;
    readonly max: number;
    readonly counters: Readonly<Record<string, string>>;
  };
  /** `loops` loops per worker, each taking one lease of the semaphore `name`. */
  readonly lease: { readonly name: string; readonly maxLeases: number; readonly loops: number };
}

type Take = (group: string) => Promise<Grant>;

export interface TakeOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export function takeLock(backend: ZkLockBackend, { name, counter }: Workloads['lock'], options: TakeOptions): Take {
  return async (group) => {
    const lock = await backend.acquire(name, options);
    return {
      parts: [{ id: group, token: String(lock.fencingToken), counter }],
      holder: lock,
      release: () => lock.release(),
    };
  };
}

export function takeMulti(
  backend: ZkLockBackend,
  { names, min, max, counters }: Workloads['multi'],
  options: TakeOptions,
): Take {
  return async (group) => {
    const list = shuffled(names).slice(0, randomInt(min, max));
    const locks = await backend.acquireAll(list, options);
    return {
      parts: locks.names.map((name, i) => ({
        id: `${group}@${name}`,
        token: String(locks.handles[i].fencingToken),
        counter: counters[name],
      })),
      holder: locks,
      flags: [`list=${list.join(',')}`],
      release: () => locks.release(),
    };
  };
}

export function takeLease(backend: ZkLockBackend, { name, maxLeases }: Workloads['lease'], options: TakeOptions): Take {
  return async (group) => {
    const lease = await backend.acquireLease(name, { maxLeases, ...options });
    return { parts: [{ id: `${group}@${name}`, token: '-' }], holder: lease, release: () => lease.release() };
  };
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
