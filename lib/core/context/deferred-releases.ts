import type { LockHandle } from '../recipe/lock-backend.interface.js';

/**
 * Releases put off by `holdAtLeastMs`: each waits on a timer of its own. `flush()` (at
 * shutdown) releases them all at once and leaves no timer behind.
 */
export class DeferredReleases {
  private readonly waiting = new Map<LockHandle, NodeJS.Timeout>();

  /** Releases `handle` after `delayMs`; a failed release is dropped (the session ends the node). */
  schedule(handle: LockHandle, delayMs: number): void {
    const timer = setTimeout(() => {
      this.waiting.delete(handle);
      handle.release().catch(() => undefined);
    }, delayMs);
    this.waiting.set(handle, timer);
  }

  get size(): number {
    return this.waiting.size;
  }

  async flush(): Promise<void> {
    const handles = [...this.waiting.keys()];
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    await Promise.allSettled(handles.map((handle) => handle.release()));
  }
}
