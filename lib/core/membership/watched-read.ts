import { setTimeout as sleep } from 'node:timers/promises';

import type { Unwatch, WatchTarget } from '../port/group.js';
import type { LockBackend } from '../port/lock-backend.js';
import { abortable } from '../util/abortable.js';

/** What `followChanges` reads, watches and tells. */
export interface WatchedRead<T> {
  readonly backend: LockBackend;
  /** What to watch: a change of any of them means read again. */
  readonly targets: readonly WatchTarget[];
  /** Reads the state (waiting for a connection as long as it takes). */
  readonly read: () => Promise<T>;
  /** Told each state read, in order. */
  readonly onRead: (value: T) => void;
  /** Ends the loop. */
  readonly stop: AbortSignal;
  /** How long to wait before trying again after a failed watch or read. */
  readonly retryDelayMs: number;
}

/**
 * Reads the state now and again after every change, until `stop` aborts: each round sets
 * the watches first, then reads, then waits for a watch to fire, so no change between the
 * read and the next round is missed. Reads and watches only: nothing is written, and at
 * idle nothing is sent at all. A failure is retried after `retryDelayMs`; a closed backend
 * ends the loop quietly.
 */
export async function followChanges<T>(loop: WatchedRead<T>): Promise<void> {
  const { backend, targets, read, onRead, stop, retryDelayMs } = loop;
  const forever = { timeoutMs: Infinity };
  while (!stop.aborted) {
    let wake!: () => void;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    const unwatches: Unwatch[] = [];
    try {
      for (const target of targets)
        unwatches.push(await watchedUnlessStopped(backend.watch(target, wake, forever), stop));
      const value = await abortable(read(), [stop]);
      if (stop.aborted) return;
      onRead(value);
      await abortable(changed, [stop]);
    } catch (error) {
      if (stop.aborted || isClosed(error)) return;
      await sleep(retryDelayMs, undefined, { signal: stop }).catch(() => undefined);
    } finally {
      for (const unwatch of unwatches) unwatch();
    }
  }
}

/** The watch being set, or the stop's reason; a watch set after the stop is dropped at once. */
function watchedUnlessStopped(setting: Promise<Unwatch>, stop: AbortSignal): Promise<Unwatch> {
  return abortable(setting, [stop]).catch((error: unknown) => {
    if (stop.aborted)
      void setting.then(
        (unwatch) => unwatch(),
        () => undefined,
      );
    throw error;
  });
}

/** Compared by code, not class: the backend may come from another copy of the package. */
function isClosed(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'CLIENT_CLOSED';
}
