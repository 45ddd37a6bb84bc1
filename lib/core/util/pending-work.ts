import { MAX_TIMER_MS } from './deadline.js';

/** Background promises to wait for at shutdown; each leaves the set when it settles. */
export class PendingWork {
  private readonly pending = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return work;
  }

  /** Waits until nothing is pending, including work started meanwhile. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * `drain()`, for at most `timeoutMs`: resolves whether everything ended in time. A
   * timeout past what a timer can wait (about 24.8 days; Node would fire it after 1 ms)
   * waits that long.
   */
  async drainWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>(
      (resolve) => (timer = setTimeout(resolve, Math.min(timeoutMs, MAX_TIMER_MS), false)),
    );
    try {
      return await Promise.race([this.drain().then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
