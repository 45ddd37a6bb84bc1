import { ZkOperationError } from '../../errors/errors.js';
import type { OwnNodes, SettlingSession } from './own-nodes.js';

/** What `ReattachSettling` needs of its session: the requests it deletes with, its state, and its end. */
export interface SettlingHost extends SettlingSession {
  isConnected(): boolean;
  isLost(): boolean;
  /** Ends the session (the server then deletes its nodes). */
  close(why: string): void;
  /** The nodes left are deleted: see `finish`. */
  settled(): void;
}

/**
 * A re-attached session object's first work: deleting the nodes the lost session object
 * left (`OwnNodes.settle`). Its waiters queued again with new nodes, so their old ones only
 * block everyone; its holders were told their locks are lost, and their nodes stay until
 * each releases (their work may still run). Until that is done, every
 * request but the session's own waits (`hold`), and the session is not connected for its
 * users. Again on the next connection after a connection loss; a delete the server refuses
 * otherwise (an ACL changed under us) ends the session, which frees them.
 */
export class ReattachSettling {
  private settled: Promise<void> | undefined;
  private release: () => void = () => undefined;
  /** Run once settled, in order, after the held requests are released. */
  private readonly afterwards: Array<() => void> = [];
  /** True while the session sends a request of its own, which the hold does not hold back. */
  private ownRequest = false;
  private running = false;

  /** `reattached`: the session asked its server for a lost session back, with `nodes` left by its last object. */
  constructor(
    private readonly nodes: OwnNodes,
    reattached: boolean,
    private readonly host: SettlingHost,
  ) {
    if (reattached) this.settled = new Promise((resolve) => (this.release = resolve));
  }

  /** Requests wait: the nodes left are not deleted yet. */
  get pending(): boolean {
    return this.settled !== undefined;
  }

  /** Sends `send` now, or once settled when it is not the session's own request. */
  hold<T>(send: () => Promise<T>): Promise<T> {
    if (this.settled && !this.ownRequest) return this.settled.then(send);
    return send();
  }

  /** Sends the requests `send` makes synchronously past the hold: the session's own. */
  own<T>(send: () => Promise<T>): Promise<T> {
    this.ownRequest = true;
    try {
      return send();
    } finally {
      this.ownRequest = false;
    }
  }

  /** Runs `then` once settled: at once when nothing is pending. */
  whenSettled(then: () => void): void {
    if (this.settled) this.afterwards.push(then);
    else then();
  }

  /** Deletes the nodes left, on the connection made now; tells the host `settled` once done. */
  run(): void {
    if (this.running) return;
    this.running = true;
    const own = <T>(send: () => Promise<T>): Promise<T> => this.own(send);
    this.nodes
      .settle({
        barrier: () => own(() => this.host.barrier()),
        getChildren: (path) => own(() => this.host.getChildren(path)),
        remove: (path) => own(() => this.host.remove(path)),
      })
      .then(
        () => this.host.settled(),
        (error: unknown) => {
          this.running = false;
          if (this.host.isLost()) return;
          if (!(error instanceof ZkOperationError) || error.zkCode !== 'CONNECTION_LOSS') {
            const code = error instanceof ZkOperationError ? error.zkCode : String(error);
            this.host.close(
              `a node of the session could not be deleted (${code}), so the session was ended to free it`,
            );
          } else if (this.host.isConnected()) this.run(); // reconnected before the loss was told: else on the next connect
        },
      );
  }

  /**
   * Releases the held requests (they go, or fail with the loss if the session was lost),
   * then runs what waited for it. False when nothing was pending.
   */
  finish(): boolean {
    if (!this.settled) return false;
    this.settled = undefined;
    this.release();
    for (const then of this.afterwards.splice(0)) then();
    return true;
  }
}
