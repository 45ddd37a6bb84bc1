/**
 * Whether locks granted in a session can be trusted, and who to tell when they cannot.
 * Distrust is told once to every listener then subscribed; after `restore()`, grants
 * from then on subscribe afresh and earlier ones stay lost.
 */
export class TrustGate {
  private reason: Error | undefined;
  private listeners = new Set<(reason: Error) => void>();

  get trusted(): boolean {
    return this.reason === undefined;
  }

  /** Someone is listening: a lock or lease is held. */
  get subscribed(): boolean {
    return this.listeners.size > 0;
  }

  /** Calls `listener` once, on distrust (at once if distrusted now); returns the unsubscribe function. */
  subscribe(listener: (reason: Error) => void): () => void {
    if (this.reason) {
      listener(this.reason);
      return () => undefined;
    }
    const listeners = this.listeners;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  distrust(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = new Set();
    for (const listener of listeners) listener(reason);
  }

  restore(): void {
    this.reason = undefined;
  }
}
