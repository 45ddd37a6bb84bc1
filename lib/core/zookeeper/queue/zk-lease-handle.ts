import { LockLostError, type ZkSessionLostError } from '../../errors/errors.js';
import type { NodeReaper } from './node-reaper.js';
import type { ZkSession } from '../session/zk-session.js';
import { assertHeld, type LeaseHandle } from '../../port/lock-backend.js';
import { leaseMessages } from '../../errors/messages.js';
import { countGrant, elapsedMs, publishLost, publishRelease } from '../../diagnostics/diagnostics.js';

export interface ZkLeaseHandleInit {
  readonly name: string;
  readonly maxLeases: number;
  readonly session: ZkSession;
  readonly dir: string;
  readonly node: string;
  readonly reaper: NodeReaper;
  readonly onReleased: (handle: ZkLeaseHandle) => void;
}

/**
 * A granted lease: one ephemeral node among the first `maxLeases` of its semaphore, alive
 * as long as its session. Lost as a lock is: its signal aborts when the session can no
 * longer be trusted, before the server could have expired it.
 */
export class ZkLeaseHandle implements LeaseHandle {
  readonly name: string;
  readonly maxLeases: number;
  /** Made on first use of `signal`: most holders never look at it. */
  private lost: AbortController | undefined;
  private lostReason: LockLostError | undefined;
  private readonly unsubscribe: () => void;
  private releasing: Promise<void> | undefined;
  /** The delete of the node once the holder was told the lock is lost, if the session lived on. */
  private dropped: Promise<void> | undefined;
  private readonly grantedAt = performance.now();

  constructor(private readonly init: ZkLeaseHandleInit) {
    ({ name: this.name, maxLeases: this.maxLeases } = init);
    this.unsubscribe = init.session.onDistrust(this.onDistrust);
    countGrant();
  }

  /** Aborts with a `LockLostError`; each read checks the clock, as a lock handle's does. */
  get signal(): AbortSignal {
    if (!this.releasing && !this.lostReason) this.init.session.checkTrust();
    if (!this.lost) {
      this.lost = new AbortController();
      if (this.lostReason) this.lost.abort(this.lostReason);
    }
    return this.lost.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  /** Checks the clock now, as `signal` does, without making the signal. */
  isHeld(): boolean {
    if (this.releasing) return false;
    if (!this.lostReason) this.init.session.checkTrust();
    return !this.lostReason;
  }

  assertHeld(): void {
    assertHeld(this);
  }

  /** The lease node's full path in ZooKeeper. */
  get path(): string {
    return `${this.init.dir}/${this.init.node}`;
  }

  /** Deletes the lease node, retrying through connection loss; again: the same promise. */
  release(): Promise<void> {
    return (this.releasing ??= this.doRelease());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** Aborts the signal with `reason` unless released or lost already (the client is closing). */
  revoke(reason: LockLostError): void {
    if (this.lostReason || this.releasing) return;
    this.lostReason = reason;
    publishLost(() => ({
      kind: 'lease',
      name: this.name,
      mode: 'lease' as const,
      heldMs: elapsedMs(this.grantedAt),
      reason: reason.why,
    }));
    this.lost?.abort(reason);
  }

  private async doRelease(): Promise<void> {
    const { session, dir, node, reaper, onReleased } = this.init;
    this.unsubscribe();
    publishRelease(() => ({
      kind: 'lease',
      name: this.name,
      mode: 'lease' as const,
      heldMs: elapsedMs(this.grantedAt),
    }));
    try {
      await (this.dropped ?? (session.isLost ? undefined : reaper.remove(session, dir, { node, prefix: node })));
    } finally {
      onReleased(this);
    }
  }

  private readonly onDistrust = (reason: Error): void => {
    const why = (reason as ZkSessionLostError).why ?? reason.message;
    this.revoke(new LockLostError(this.name, `${leaseMessages.lost} (${why})`, reason));
    // Told, its node only blocks everyone: it goes at once if the session lives on (at risk,
    // then proven again). A lost session object's nodes go when the next one re-attaches.
    const { session, dir, node, reaper } = this.init;
    if (!this.releasing && !session.isLost) this.dropped = reaper.remove(session, dir, { node, prefix: node });
  };
}
