import { longTimeout, type LongTimeout } from '../util/long-timeout.js';

/** Anything released with one call: a lock, a multi-lock. */
interface Releasable {
  /** A lock's name, or a multi-lock's names. */
  readonly name?: string;
  readonly names?: readonly string[];
  release(): Promise<void>;
}

/**
 * Releases put off by `holdAtLeastMs` in the process (`withLocks`, and a `withLock` whose
 * kept hold could not be put in the backend): each waits on a timer of its own. `flush()` (at
 * shutdown) releases them all at once and leaves no timer behind.
 */
export class DeferredReleases {
  private readonly waiting = new Map<Releasable, LongTimeout>();

  /**
   * Releases `handle` after `delayMs`, however long (a monthly job's is past `setTimeout`'s
   * range); a failed release is dropped (the session ends the node).
   */
  schedule(handle: Releasable, delayMs: number): void {
    const timer = longTimeout(() => {
      this.waiting.delete(handle);
      handle.release().catch(() => undefined);
    }, delayMs);
    this.waiting.set(handle, timer);
  }

  /** Whether a release of the lock `name` is put off here. */
  holds(name: string): boolean {
    return [...this.waiting.keys()].some((handle) => handle.name === name || handle.names?.includes(name));
  }

  get size(): number {
    return this.waiting.size;
  }

  async flush(): Promise<void> {
    const handles = [...this.waiting.keys()];
    for (const timer of this.waiting.values()) timer.clear();
    this.waiting.clear();
    await Promise.allSettled(handles.map((handle) => handle.release()));
  }
}
