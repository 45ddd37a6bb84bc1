import { LockLostError, type ZkSessionLostError } from '../../errors/errors.js';
import { longTimeout, type LongTimeout } from '../../util/long-timeout.js';
import { lockMessages } from '../../errors/messages.js';
import type { ZkSession } from '../session/zk-session.js';
import { assertHeld, type HoldExpiry } from '../../port/lock-backend.js';
import type { NodeReaper } from './node-reaper.js';
import {
  countGrant,
  elapsedMs,
  publishLost,
  publishRelease,
  type LostReason,
  type ReleaseMessage,
} from '../../diagnostics/diagnostics.js';

export interface NodeHandleInit {
  readonly name: string;
  readonly session: ZkSession;
  readonly dir: string;
  readonly node: string;
  readonly reaper: NodeReaper;
  readonly onReleased: (handle: NodeHandle) => void;
  /** The call's `maxHoldMs`: past it the holder is told, then the node goes. */
  readonly maxHoldMs?: number;
  /** The identity written into the node: who held it too long, for `maxHoldMs`'s message. */
  readonly identity: Buffer;
  /** `release()` waits for ZooKeeper's answer to the delete (`release: "confirmed"`), not only for it to be sent. */
  readonly confirmRelease: boolean;
}

/** What `release()` answers once the delete is sent: nothing to wait for. */
const SENT: Promise<void> = Promise.resolve();

/** What the diagnostics channels say a handle is. */
type Described = Pick<ReleaseMessage, 'kind' | 'mode'>;

/**
 * A granted lock or lease on ZooKeeper: one ephemeral node, alive as long as its session.
 * Lost when the session can no longer be trusted, before the server could have expired it:
 * the holder is told (its signal aborts), and the node stays until the holder releases it
 * (or its `maxHoldMs` runs out), since most work never looks at the signal; only the end
 * of the server session frees it earlier.
 */
export abstract class NodeHandle implements AsyncDisposable, HoldExpiry {
  readonly name: string;
  /** Made on first use of `signal`: most holders never look at it. */
  private lost: AbortController | undefined;
  private lostReason: LockLostError | undefined;
  private readonly unsubscribe: () => void;
  /** The release, from its call until the node is confirmed gone. */
  private releasing: Promise<void> | undefined;
  /** `releaseConfirmed` read before `release()` was called: settled by the release. */
  private confirmLater: ((release: Promise<void>) => void) | undefined;
  private confirmation: Promise<void> | undefined;
  /** The delete of the node once the holder was told its `maxHoldMs` ran out. */
  private dropped: Promise<void> | undefined;
  private readonly grantedAt = performance.now();
  /** Armed at the grant when the call set `maxHoldMs`; cleared by the release. */
  private readonly maxHold: LongTimeout | undefined;

  protected constructor(
    private readonly init: NodeHandleInit,
    private readonly described: Described,
  ) {
    this.name = init.name;
    init.session.holding(this.path);
    this.unsubscribe = init.session.onDistrust(this.onDistrust);
    const { maxHoldMs } = init;
    if (maxHoldMs !== undefined) this.maxHold = longTimeout(() => this.holdExpired(maxHoldMs), maxHoldMs);
    countGrant();
  }

  /**
   * Aborts with a `LockLostError` when the lock can no longer be trusted. Each read checks
   * the clock at that moment, so code that blocked the event loop past the deadline reads
   * `handle.signal.aborted === true` at once, before any timer has run.
   */
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

  /** The node's name in its directory, as `contenders()` reports it. */
  get node(): string {
    return this.init.node;
  }

  /** The node's full path in ZooKeeper. */
  get path(): string {
    return `${this.init.dir}/${this.init.node}`;
  }

  /**
   * Deletes the node, retrying through connection loss until it is gone or the session
   * ends (which deletes it too); through the session object that re-attached to the same
   * server session when the client presumed this one lost. Resolves once the delete is
   * sent, or once ZooKeeper answered it with `release: "confirmed"`; `isHeld()` is `false`
   * from the call on. Calling it again answers as the first call did.
   */
  release(): Promise<void> {
    if (!this.releasing) {
      // The delete is on the session before this returns: doRelease sends it before its first
      // await (a group's go together in the same call, see ZkLockGroupRequests.releaseAll).
      this.releasing = this.doRelease();
      this.confirmLater?.(this.releasing);
      if (!this.init.confirmRelease) this.releasing.catch(() => undefined); // read through releaseConfirmed
    }
    return this.init.confirmRelease ? this.releasing : SENT;
  }

  /**
   * Settles once the node is confirmed gone: ZooKeeper answered its delete, or the server
   * session that owned it ended. Pending until `release()` is called.
   */
  get releaseConfirmed(): Promise<void> {
    return (this.confirmation ??= this.releasing ?? new Promise<void>((resolve) => (this.confirmLater = resolve)));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /**
   * Aborts the signal with `reason` (if it has not aborted yet), before the lock is
   * released under a holder that did not release it (the client is closing).
   */
  revoke(reason: LockLostError, cause: LostReason): void {
    if (this.lostReason || this.releasing) return; // a holder that released already was not cut short
    this.lostReason = reason; // `maxHold` stays armed: a lost holder's node goes at its limit at the latest
    publishLost(() => ({
      ...this.described,
      name: this.name,
      heldMs: elapsedMs(this.grantedAt),
      reason: cause,
      why: reason.why,
    }));
    this.lost?.abort(reason);
  }

  /** Stops what the handle watches besides its node; runs once, as the release starts. */
  protected onRelease(): void {}

  private async doRelease(): Promise<void> {
    const { onReleased } = this.init;
    // The delete leaves first: the next holder is waiting for it. The rest runs in the
    // same tick, before any reply (or the delete's own notification) can arrive.
    const removed = this.dropped ?? this.removeNode();
    this.unsubscribe();
    this.maxHold?.clear();
    publishRelease(() => ({ ...this.described, name: this.name, heldMs: elapsedMs(this.grantedAt) }));
    this.onRelease();
    try {
      await removed;
    } finally {
      onReleased(this);
    }
  }

  private readonly onDistrust = (reason: Error): void => {
    const why = (reason as ZkSessionLostError).why ?? reason.message;
    // Told, but its node stays: the holder's work may still run (most never read the signal),
    // and if the session lives on (at risk, then proven again, or re-attached) nobody else
    // may be granted until the holder releases. A session that ended took the node with it.
    this.revoke(new LockLostError(this.name, `${lockMessages.sessionDistrusted} (${why})`, reason), 'session');
  };

  /**
   * @internal Held past `maxHoldMs` (its own, or its group's): the holder is told first (its signal
   * aborts), then the node goes, so that no other client is granted while this holder
   * could still believe it holds.
   */
  holdExpired(maxHoldMs: number): void {
    if (this.releasing || this.dropped) return;
    // Lost to its session earlier, it was told then, and its node stayed for its work: the limit still ends it.
    if (!this.lostReason) {
      const reason = new LockLostError(this.name, lockMessages.maxHold(maxHoldMs, this.init.identity.toString('utf8')));
      this.revoke(reason, 'max-hold');
    }
    this.drop();
  }

  /** Deletes the node of a holder told its `maxHoldMs` ran out, unless it released already. */
  private drop(): void {
    if (!this.releasing) this.dropped = this.removeNode();
  }

  /** The node's guaranteed delete; the owner lets it go, so a re-attach no longer keeps it. */
  private removeNode(): Promise<void> {
    const { session, dir, node, reaper } = this.init;
    session.letGo(this.path);
    return reaper.remove(session, dir, { node, prefix: node });
  }
}
