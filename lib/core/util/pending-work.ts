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
}
