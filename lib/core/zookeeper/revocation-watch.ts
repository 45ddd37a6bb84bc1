import type { ZkSession, ZkWatchListener } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { LockRevocationRequestedError } from '../errors/errors.js';
import { isRevokeRequest } from './revocation-wire.js';

/**
 * A revocable holder's watch on its own lock node's data (Curator's `makeRevocable`):
 * `signal` aborts with a `LockRevocationRequestedError` once the data reads `__REVOKE__`.
 *
 * One data watch at a time, set when the lock is granted. A change to anything else re-reads
 * and re-arms it; the first read also catches a request written before the watch was set
 * (a requester may see us holding before we do). The watch ends by itself when the node goes
 * (release: ZooKeeper fires and drops it) or the session does (the server drops every watch
 * of it); `stop()` drops our listener. Connection losses are waited out: node-zookeeper-client
 * re-registers the watch on reconnect, and a re-read cut short is sent again.
 */
export class RevocationWatch {
  private readonly requested = new AbortController();
  private readonly stopping = new AbortController();
  /** Settles once the first read is answered (or the watch ended without one); never rejects. */
  readonly armed: Promise<void>;

  constructor(
    private readonly session: ZkSession,
    private readonly path: string,
    private readonly name: string,
  ) {
    this.armed = this.arm();
  }

  /** Aborts, reason `LockRevocationRequestedError`, when someone asks this holder to release. */
  get signal(): AbortSignal {
    return this.requested.signal;
  }

  /** The holder released: drop our listener (the release's delete ends ZooKeeper's watch). */
  stop(): void {
    this.stopping.abort();
    this.session.unwatch(this.path, this.onEvent);
  }

  private get done(): boolean {
    return this.stopping.signal.aborted || this.requested.signal.aborted || this.session.isLost;
  }

  private readonly onEvent: ZkWatchListener = (event) => {
    // NODE_DELETED (released, or deleted by hand) and SESSION_LOST leave nothing to watch.
    if (event.type === 'NODE_DATA_CHANGED' && !this.done) void this.arm();
  };

  private async arm(): Promise<void> {
    for (;;) {
      try {
        const data = await this.session.watchDataValue(this.path, this.onEvent);
        if (isRevokeRequest(data) && !this.done) this.requested.abort(new LockRevocationRequestedError(this.name));
        return;
      } catch (error) {
        // Anything but a lost connection (the session is gone, or the node cannot be read)
        // ends the watch: the lock's own signal tells the holder about a lost session.
        if (!isZkCode(error, 'CONNECTION_LOSS') || this.done) return;
        if (!(await this.reconnected())) return;
      }
    }
  }

  private async reconnected(): Promise<boolean> {
    try {
      await this.session.whenConnected(this.stopping.signal);
      return !this.done;
    } catch {
      return false; // the session was lost, or the holder released, meanwhile
    }
  }
}
