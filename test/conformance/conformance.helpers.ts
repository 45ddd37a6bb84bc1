import { setTimeout as sleep } from 'node:timers/promises';

import type {
  LockBackend,
  LockContender,
  LockHandle,
  LockList,
  LockMode,
  MultiAcquireOptions,
  MultiLockHandle,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';

/** An acquire under way, and whether it was granted yet. */
export interface Tracked<T> {
  readonly granted: () => boolean;
  readonly result: Promise<T>;
}

/** Starts watching `promise`: `granted()` turns true once it resolves. */
export function track<T>(promise: Promise<T>): Tracked<T> {
  let granted = false;
  const result = promise.then((value) => ((granted = true), value));
  result.catch(() => undefined); // a test that expects a rejection awaits `result` itself
  return { granted: () => granted, result };
}

/** The reason `promise` rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** Waits until `name` has `count` contenders (so the next acquire queues behind them). */
export function queued(backend: LockBackend, name: string, count: number): Promise<void> {
  return waitUntil(async () => (await backend.contenders(name)).length === count, `${count} contenders on ${name}`);
}

/** `[mode, holding]` of each contender, in queue order: the shape of the queue. */
export async function queueShape(backend: LockBackend, name: string): Promise<Array<[LockMode, boolean]>> {
  return (await backend.contenders(name)).map((c: LockContender) => [c.mode, c.holding]);
}

/** Releases every handle given (ignoring `null`s). */
export async function releaseAll(...handles: Array<LockHandle | null | undefined>): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/await-thenable -- some entries are plain values, on purpose
  await Promise.all(handles.map((handle) => handle?.release()));
}

/** Lets the event loop turn `times` times: long enough for a wrong grant to show up in memory. */
export async function turns(times = 3): Promise<void> {
  for (let i = 0; i < times; i++) await sleep(1);
}

/**
 * Counts who is inside a critical section and records every broken rule: a writer with
 * anyone else inside, or a reader with a writer inside.
 */
export class OverlapMeter {
  private readers = 0;
  private writers = 0;
  readonly violations: string[] = [];
  maxReaders = 0;

  enter(mode: LockMode): void {
    if (mode === 'write' ? this.readers + this.writers > 0 : this.writers > 0) {
      this.violations.push(`${mode} entered with ${this.readers} readers and ${this.writers} writers inside`);
    }
    if (mode === 'write') this.writers++;
    else this.maxReaders = Math.max(this.maxReaders, ++this.readers);
  }

  leave(mode: LockMode): void {
    if (mode === 'write') this.writers--;
    else this.readers--;
  }
}

/** Kazoo's node name: 32 hex digits, the mode's marker, ten digits of sequence. */
export const KAZOO_NODE = /^[0-9a-f]{32}(__lock__|__rlock__)\d{10}$/;

/** `backend.acquireAll`, which every backend of this library has (the port makes it optional). */
export function acquireAll(
  backend: LockBackend,
  locks: LockList,
  options?: MultiAcquireOptions,
): Promise<MultiLockHandle> {
  if (!backend.acquireAll) throw new Error('this backend has no acquireAll');
  return backend.acquireAll(locks, options);
}
