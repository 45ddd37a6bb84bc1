import type { LockBackend } from '../core/port/lock-backend.js';

/**
 * The life of a service whose members start at bootstrap (`PartitionService`'s groups,
 * `LeadershipService`'s elections): created, running once bootstrap connected the
 * backend, closed at shutdown. Members joined before bootstrap wait for it; those joined
 * while it runs start at once.
 */
export class BootstrapLifecycle {
  private state: 'created' | 'running' | 'closed' = 'created';

  constructor(private readonly backend: LockBackend) {}

  /** From bootstrap to shutdown: a member joined now starts at once. */
  get running(): boolean {
    return this.state === 'running';
  }

  /** From shutdown on, or after bootstrap could not connect. */
  get closed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Bootstrap: connects the backend when members wait (`connect`; with none, a later join
   * connects it on first use), then runs. Resolves `true` when the members joined so far
   * are to start now; `false` when the service shut down meanwhile or the connection
   * failed: that failure is `LockService`'s to report (it fails start-up naming the
   * connection string; `start()` is idempotent, so both wait for the same connection).
   */
  async bootstrap(connect: boolean): Promise<boolean> {
    if (this.state !== 'created') return false;
    if (connect) {
      try {
        await this.backend.start();
      } catch {
        this.state = 'closed';
        return false;
      }
      if (this.state !== 'created') return false; // shut down meanwhile
    }
    this.state = 'running';
    return true;
  }

  shutdown(): void {
    this.state = 'closed';
  }
}
