import { LockLostError } from '../errors/lock-lost.error.js';
import type { ZkSessionLostError } from '../errors/zk-session-lost.error.js';
import type { ZkSession } from '../session/zk-session.js';
import type { LockHandle } from './lock-backend.interface.js';
import type { LockMode } from './lock-mode.js';
import type { NodeReaper } from './node-reaper.js';

export interface ZkLockHandleInit {
  readonly name: string;
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  readonly session: ZkSession;
  readonly dir: string;
  readonly node: string;
  readonly reaper: NodeReaper;
  readonly onReleased: (handle: ZkLockHandle) => void;
}

/** A granted ZooKeeper lock: one ephemeral node, alive as long as its session. */
export class ZkLockHandle implements LockHandle {
  readonly name: string;
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  private readonly lost = new AbortController();
  /** The session's trust at grant time: aborts when the session may expire (or did). */
  private readonly trust: AbortSignal;
  private releasing: Promise<void> | undefined;

  constructor(private readonly init: ZkLockHandleInit) {
    ({ name: this.name, mode: this.mode, fencingToken: this.fencingToken } = init);
    this.trust = init.session.trustSignal;
    if (this.trust.aborted) this.onSessionLost();
    else this.trust.addEventListener('abort', this.onSessionLost, { once: true });
  }

  get signal(): AbortSignal {
    return this.lost.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  /** The lock node's full path in ZooKeeper. */
  get path(): string {
    return `${this.init.dir}/${this.init.node}`;
  }

  /**
   * Deletes the lock node, retrying through connection loss. After the session is gone the
   * node is gone too, and this does nothing. Calling it again returns the first call's promise.
   */
  release(): Promise<void> {
    return (this.releasing ??= this.doRelease());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  private async doRelease(): Promise<void> {
    const { session, dir, node, reaper, onReleased } = this.init;
    this.trust.removeEventListener('abort', this.onSessionLost);
    try {
      if (!session.isLost) await reaper.remove(session, dir, { node, prefix: node });
    } finally {
      onReleased(this);
    }
  }

  private readonly onSessionLost = (): void => {
    const reason = this.trust.reason as ZkSessionLostError;
    this.lost.abort(new LockLostError(this.name, `its ZooKeeper session cannot be trusted any more (${reason.why})`, reason));
  };
}
