import { LockAbortedError, LockTimeoutError, ZkSessionLostError } from '../../errors/errors.js';
import { lockMessages, leaseMessages } from '../../errors/messages.js';
import { newAttemptGuid } from '../../port/lock-node.js';
import { listChildren, removeIfEmpty } from './directory.js';
import { answerAtOnce } from '../session/client-outage.js';
import type { ZkSession } from '../session/zk-session.js';
import { longTimeout } from '../../util/long-timeout.js';
import { Stop } from '../../util/stop.js';
import { isZkCode } from '../session/zk-error-code.js';
import { checkNoKazooLeases, type Retrying } from './directory-kind.js';
import { readQueue, signalGrant, watchPredecessor, type Listing, type SeenVersion, type View } from './lease-wait.js';
import { waitForChange } from './blocker-wait.js';
import { leaseNodePrefix } from '../../port/lease-node.js';
import { leaseNodesWithPrefix, leasePositionOf } from '../../port/lease-queue.js';
import type { LeaseContext, LeaseGrant, LeaseRequest } from './acquisition.js';

/** Where one attempt stands between listings. */
interface Turn {
  node: string;
  /** The directory was checked against the one this client knows (see `LeaseDirectories.confirm`). */
  confirmed: boolean;
  /** Whether the next listing sets a children watch. */
  watchChildren: boolean;
}

const RESTART = Symbol('restart');
const WAIT = Symbol('wait');
type Outcome = LeaseGrant | null | typeof RESTART;

/**
 * One call to take a lease: the queue rule of `lease-queue.ts` on ZooKeeper, with the lock
 * recipe's recoveries (a lost create reply found again by its guid after a barrier; the
 * node of a failed attempt deleted through connection loss; a lost session queues again
 * in the new one). Resolves with a grant, `null` when `timeoutMs` is 0 and no lease is
 * free, or rejects with why it stopped; in every failure the node it created is deleted.
 */
export class LeaseAcquisition {
  private readonly stop = new Stop();
  private readonly seen: SeenVersion = {};

  constructor(
    private readonly ctx: LeaseContext,
    private readonly req: LeaseRequest,
  ) {}

  /** Stops the wait with `reason` (the client is closing). */
  cancel(reason: unknown): void {
    this.stop.stop(reason);
  }

  async run(): Promise<LeaseGrant | null> {
    const { name, maxLeases, timeoutMs, signal } = this.req;
    const timer =
      timeoutMs > 0
        ? longTimeout(
            () =>
              this.stop.stop(
                new LockTimeoutError(name, 'lease', timeoutMs, leaseMessages.timeout(name, maxLeases, timeoutMs)),
              ),
            timeoutMs,
          )
        : undefined;
    const onAbort = (): void => this.stop.stop(new LockAbortedError(name, signal!.reason));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        this.stop.throwIfStopped();
        const outcome = await this.attempt(this.ctx.client.liveSession());
        if (outcome !== RESTART) return outcome;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      timer?.clear();
    }
  }

  /** One pass in one session; RESTART when that session died (our node died with it). */
  private async attempt(session: ZkSession): Promise<Outcome> {
    const prefix = leaseNodePrefix(newAttemptGuid());
    let turn: Turn | undefined;
    let granted = false;
    const offline =
      this.req.timeoutMs === 0
        ? answerAtOnce(this.ctx.client.outage, session, this.stop, lockMessages.lockSubject(this.req.name, 'lease'))
        : undefined;
    try {
      await this.ctx.directories.prepare(session, this.req, { retrying: this.retrier(session), stop: this.stop });
      const created = await this.createNode(session, prefix);
      turn = { node: created.node, confirmed: false, watchChildren: false };
      let view: View = created.listing ? { listing: created.listing } : await this.read(session, false);
      for (;;) {
        const outcome = await this.takeTurn(session, prefix, view, turn);
        if (outcome !== WAIT) {
          granted = outcome !== null && outcome !== RESTART;
          return outcome;
        }
        view = await this.read(session, turn.watchChildren);
      }
    } catch (error) {
      if (this.stop.isStopped) throw this.stop.reason;
      if (error instanceof ZkSessionLostError) return RESTART;
      throw error;
    } finally {
      offline?.();
      if (!granted) await this.abandon(session, prefix, turn?.node);
    }
  }

  /** What one listing means for our node: an outcome, or WAIT once the wake-up it calls for came. */
  private async takeTurn(
    session: ZkSession,
    prefix: string,
    { listing, wake }: View,
    turn: Turn,
  ): Promise<Outcome | typeof WAIT> {
    try {
      turn.node = this.keepOne(session, prefix, turn.node, listing.children);
      const position = leasePositionOf(listing.children, turn.node, this.req.maxLeases);
      if (position.kind === 'missing') return RESTART; // deleted under a live session (by hand)
      if (!turn.confirmed) {
        // Made a lock's, or another count's, since we checked it: our node goes (in `attempt`), and we prepare again.
        if (!(await this.ctx.directories.confirm(session, this.req, listing.stat, this.retrier(session))))
          return RESTART;
        turn.confirmed = true;
      }
      checkNoKazooLeases(this.req.name, this.req.dir, listing.children);
      if (position.kind === 'retire') return await this.retire(session, prefix, turn.node);
      if (position.kind === 'holding') {
        // A long wait wrote nothing: one write first, so that the grant is trusted.
        if (session.proofIsStale) await this.retrying(session, () => session.barrier());
        this.stop.throwIfStopped(); // a grant after the deadline (or a drop, for a try) never reaches the caller
        if (position.successor) signalGrant(session, `${this.req.dir}/${turn.node}`, this.ctx.identity);
        return { session, node: turn.node };
      }
      if (this.req.timeoutMs === 0) return null;
      if (position.kind === 'head') {
        // The head waits on a children watch, and every read it makes next sets the next one:
        // a wake costs one read whatever its cause (a holder leaving, or a node arriving
        // behind us, which cannot grant us), and a read without a watch is read again with one.
        // When that read grants us, its watch stays on the server until the next change
        // fires it (one notification, no request): cheaper than reading twice per arrival.
        turn.watchChildren = true;
        if (wake) await this.stop.race(wake.fired);
        return WAIT;
      }
      // Behind a node that now holds, or right behind a head that went, we are most likely
      // the head: the next read sets the children watch the head needs.
      const path = `${this.req.dir}/${position.predecessor.node}`;
      const signalled = await this.retrying(session, () => watchPredecessor(session, path, this.stop, this.seen));
      turn.watchChildren = signalled || position.deputy;
      return WAIT;
    } finally {
      wake?.dispose();
    }
  }

  /** The directory's children, with a children watch when `watch` (the head waits on it). */
  private read(session: ZkSession, watch: boolean): Promise<View> {
    return readQueue(session, this.req.dir, watch, this.retrier(session));
  }

  /**
   * Creates our ephemeral sequential node with the children read sent right behind it (one
   * round trip). A create whose reply is lost may still have happened: after reconnecting
   * (same session) a barrier, then a lookup by guid, before creating again. A vanished
   * directory is made again, with our number of leases.
   */
  private async createNode(session: ZkSession, prefix: string): Promise<{ node: string; listing?: Listing }> {
    const { dir } = this.req;
    this.ctx.sweeper.claim(dir);
    for (;;) {
      const creating = session.create(`${dir}/${prefix}`, this.ctx.identity, 'ephemeral-sequential');
      const reading = listChildren(session, dir).catch(() => null);
      try {
        const created = await this.stop.race(creating);
        const node = created.slice(created.lastIndexOf('/') + 1);
        const listing = await this.stop.race(reading);
        return { node, listing: listing?.children.includes(node) ? listing : undefined };
      } catch (error) {
        if (isZkCode(error, 'NO_NODE')) {
          await this.ctx.directories.recreate(session, this.req, this.retrier(session));
          continue;
        }
        if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
        await session.whenConnected(this.stop.signal);
        await this.retrying(session, () => session.barrier());
        const listing = await this.retrying(session, () => listChildren(session, dir));
        const [found] = leaseNodesWithPrefix(listing?.children ?? [], prefix);
        if (found) return { node: found };
      }
    }
  }

  /** Every child carrying this attempt's guid is ours: the lowest queues, any other is deleted. */
  private keepOne(session: ZkSession, prefix: string, node: string, children: readonly string[]): string {
    const ours = leaseNodesWithPrefix(children, prefix);
    if (ours.length <= 1) return node;
    for (const extra of ours.slice(1)) void this.ctx.reaper.remove(session, this.req.dir, { node: extra, prefix });
    return ours[0];
  }

  /**
   * The directory's sequence counter is about to run out: as the lock recipe does, our
   * node goes, we wait until the directory drains, delete it and queue again in a new one.
   */
  private async retire(session: ZkSession, prefix: string, node: string): Promise<null | typeof RESTART> {
    await this.ctx.reaper.remove(session, this.req.dir, { node, prefix });
    for (;;) {
      const children = (await this.retrying(session, () => listChildren(session, this.req.dir)))?.children ?? [];
      if (children.length === 0) {
        await this.stop.race(removeIfEmpty(session, this.req.dir));
        return RESTART;
      }
      if (this.req.timeoutMs === 0) return null;
      await this.retrying(session, () => waitForChange(session, `${this.req.dir}/${children[0]}`, this.stop));
    }
  }

  private retrier(session: ZkSession): Retrying {
    return (request) => this.retrying(session, request);
  }

  /** Runs a request, waiting out connection losses (the session survives them). */
  private async retrying<T>(session: ZkSession, request: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await this.stop.race(request());
      } catch (error) {
        if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
        await session.whenConnected(this.stop.signal);
      }
    }
  }

  /**
   * Deletes the node of an attempt that got no lease: waited for while connected, so a
   * failed call returns with nothing left behind; across a connection loss the reaper
   * carries on in the background. A head's children watch goes with it: our own delete fires it.
   */
  private async abandon(session: ZkSession, prefix: string, node: string | undefined): Promise<void> {
    if (session.isLost) return;
    await session.whileConnected(
      this.ctx.reaper.remove(session, this.req.dir, { node, prefix, find: leaseNodesWithPrefix }),
    );
  }
}
