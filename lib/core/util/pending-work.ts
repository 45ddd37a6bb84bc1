import { longTimeout, type LongTimeout } from './long-timeout.js';

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
   * `drain()`, for at most `timeoutMs` (however long: see `longTimeout`); resolves
   * whether everything ended in time.
   */
  async drainWithin(timeoutMs: number): Promise<boolean> {
    let timer: LongTimeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = longTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([this.drain().then(() => true), timedOut]);
    } finally {
      timer?.clear();
    }
  }
}
