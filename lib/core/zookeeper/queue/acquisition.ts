import { LockAbortedError, LockTimeoutError, ZkSessionLostError } from '../../errors/errors.js';
import { lockMessages } from '../../errors/messages.js';
import { newLockNodePrefix } from '../../port/node-format.js';
import { answerAtOnce } from '../session/client-outage.js';
import type { ZkSession } from '../session/zk-session.js';
import { longTimeout } from '../../util/long-timeout.js';
import { Stop } from '../../util/stop.js';
import { isZkCode } from '../session/zk-error-code.js';
import { lockDirectoryKind, settleLockDirectory, type LeaseDirectories, type SemaphoreRef } from './directory-kind.js';
import { waitForChange } from './blocker-wait.js';
import { ensurePath, listChildren, removeIfEmpty, type Listing } from './directory.js';
import { nodesWithPrefix, positionOf } from '../../port/lock-queue.js';
import type { NodeFormat, LockMode } from '../../port/lock-backend.js';
import type { ZkClient } from '../session/zk-client.js';
import type { DirectorySweeper } from './directory-sweeper.js';
import type { NodeReaper } from './node-reaper.js';

const RESTART = Symbol('restart');

/** A directory that does not exist, as a listing: our node is missing from it. */
const EMPTY_LISTING: Listing = { children: [], stat: { pzxid: 0n, czxid: 0n } };

/**
 * One call to acquire a lock: the ZooKeeper recipe (the ZooKeeper recipes page)
 * with the recoveries the mature clients learned. Resolves with a grant, `null` when
 * `timeoutMs` is 0 and the lock is taken, or rejects with the reason it stopped
 * (`LockTimeoutError`, `LockAbortedError`, `LockClientClosedError`); in every failure the
 * node it created is deleted.
 */
export class LockAcquisition {
  private readonly stop = new Stop();
  /** The first attempt's create, if the caller sent it; used once, in its own session. */
  private sent: SentCreate | undefined;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    this.sent = req.sent;
  }

  /** Stops the wait with `reason` (the client is closing). */
  cancel(reason: unknown): void {
    this.stop.stop(reason);
  }

  async run(): Promise<Grant | null> {
    const { name, mode, timeoutMs, signal } = this.req;
    // timeoutMs 0 never waits for a holder, so it needs no timer (one firing at once
    // would cut short the create and the read that tell whether the lock is free).
    const timer =
      timeoutMs > 0
        ? longTimeout(() => this.stop.stop(new LockTimeoutError(name, mode, timeoutMs)), timeoutMs)
        : undefined;
    const onAbort = (): void => this.stop.stop(new LockAbortedError(name, signal!.reason));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    // Closing the client cancels every wait (ZkLockBackend.cancelWaits): no link needed.
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
  private async attempt(session: ZkSession): Promise<Grant | null | typeof RESTART> {
    const sent = this.sent?.session === session ? this.sent : undefined;
    this.sent = undefined;
    // Before the claim: a try refused here leaves a group's create to nobody, so it is not sent.
    const offline = this.req.timeoutMs === 0 ? this.answerAtOnce(session) : undefined;
    sent?.claim?.();
    const prefix = sent?.prefix ?? newLockNodePrefix(this.req.mode, this.req.nodeFormat);
    let node: string | undefined;
    let granted = false;
    let withdrawn = false;
    try {
      let listing: Listing | undefined;
      ({ node, listing } = await this.createNode(session, prefix, sent));
      let directoryChecked = false;
      for (;;) {
        listing ??= (await this.retrying(session, () => listChildren(session, this.req.dir))) ?? EMPTY_LISTING;
        node = this.keepOne(session, prefix, node, listing.children);
        const position = positionOf(listing.children, node);
        // Missing: our node was deleted under a live session (by hand): queue again.
        if (position.kind === 'missing') return RESTART;
        if (!directoryChecked) {
          // A lock's directory has no data: free. Our lease semaphore's is taken over if idle.
          const { stat } = listing;
          // No await for a directory without data (every lock's): no turn of the event loop either.
          if (
            stat.dataLength &&
            (await this.retrying(session, () => lockDirectoryKind(session, this.req.dir, this.req.name, stat))) ===
              'lease'
          ) {
            withdrawn = true;
            return await this.leaveSemaphore(session, prefix, node);
          }
          directoryChecked = true;
        }
        if (position.kind === 'retire') return await this.retire(session, prefix, node);
        if (position.kind === 'holding') {
          // A long wait wrote nothing: one write first, so that the grant is trusted.
          if (session.proofIsStale) await this.retrying(session, () => session.barrier());
          this.stop.throwIfStopped(); // a grant after the deadline (or a drop, for a try) never reaches the caller
          granted = true;
          return { session, node, fencingToken: listing.stat.pzxid };
        }
        if (this.req.timeoutMs === 0) return null;
        listing = (await this.waitAndRead(session, `${this.req.dir}/${position.blocker.node}`)) ?? EMPTY_LISTING;
      }
    } catch (error) {
      if (this.stop.isStopped) throw this.stop.reason;
      if (error instanceof ZkSessionLostError) return RESTART;
      throw error;
    } finally {
      offline?.();
      // A try cut off mid-exchange: its node, if the create got through, is found by its guid.
      if (!granted && !withdrawn) await this.abandon(session, prefix, node);
    }
  }

  /** See `answerAtOnce`: a try (`timeoutMs: 0`) answers while no session is connected. */
  private answerAtOnce(session: ZkSession): () => void {
    const { name, mode } = this.req;
    return answerAtOnce(this.ctx.client.outage, session, this.stop, lockMessages.lockSubject(name, mode));
  }

  /**
   * Our node landed in our lease semaphore's directory: it goes first (ZooKeeper replaces no
   * directory with a child in it); then the directory becomes a lock's if nobody holds or
   * awaits a lease there (else `LockKindMismatchError`), and we queue again.
   */
  private async leaveSemaphore(session: ZkSession, prefix: string, node: string): Promise<typeof RESTART> {
    await this.abandon(session, prefix, node);
    await settleLockDirectory(session, this.req.dir, this.req.name, {
      retrying: (request) => this.retrying(session, request),
      stop: this.stop,
    });
    return RESTART;
  }

  /**
   * Creates our ephemeral sequential node, with the children read sent right behind it:
   * per-session FIFO order makes the read see the create, so the common case costs one
   * round trip. A create whose reply is lost may still have happened: after reconnecting
   * (same session) we look for our guid before creating again, so there is never a
   * second node. A vanished directory is re-created. `sent`: the first create, already
   * sent by the caller (a multi-lock's one transaction); made here if it did not happen.
   */
  private async createNode(
    session: ZkSession,
    prefix: string,
    sent?: SentCreate,
  ): Promise<{ node: string; listing?: Listing }> {
    const path = `${this.req.dir}/${prefix}`;
    this.ctx.sweeper.claim(this.req.dir);
    for (;;) {
      const { created: creating, listed: reading } = sent ?? sendCreate(session, path, this.req.dir, this.ctx.identity);
      sent = undefined;
      try {
        // The read's reply comes right behind the create's: one wait for both.
        const [created, listing] = await this.stop.race(Promise.all([creating, reading]));
        if (created === undefined) continue; // the sender's create did not happen: create it here
        const node = created.slice(created.lastIndexOf('/') + 1);
        return { node, listing: listing?.children.includes(node) ? listing : undefined };
      } catch (error) {
        if (isZkCode(error, 'NO_NODE')) {
          await this.retrying(session, () => ensurePath(session, this.req.dir));
          continue;
        }
        if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
        await session.whenConnected(this.stop.signal);
        // The barrier first: the server we reconnected to may lag behind the leader, and
        // would hide a create that did happen; we would then queue a second node behind it.
        await this.retrying(session, () => session.barrier());
        const listing = await this.retrying(session, () => listChildren(session, this.req.dir));
        const [found] = nodesWithPrefix(listing?.children ?? [], prefix);
        if (found) return { node: found };
      }
    }
  }

  /**
   * Every child carrying this attempt's guid is ours: the lowest is the one we queue with,
   * any other is deleted at once (never waited on). The barrier before each lookup makes
   * extras all but impossible; this keeps them harmless if one appears anyway.
   */
  private keepOne(session: ZkSession, prefix: string, node: string, children: readonly string[]): string {
    const ours = nodesWithPrefix(children, prefix);
    if (ours.length <= 1) return node;
    for (const extra of ours.slice(1)) void this.ctx.reaper.remove(session, this.req.dir, { node: extra, prefix });
    return ours[0];
  }

  /**
   * The directory's sequence counter is about to run out (see `RETIRE_SEQUENCE`): our
   * node goes, we wait until the queue ahead drains (every client of this library
   * withdraws the same way, so it does), delete the directory and queue again in a new
   * one, whose counter starts at 0. Never granted meanwhile.
   */
  private async retire(session: ZkSession, prefix: string, node: string): Promise<null | typeof RESTART> {
    await this.ctx.reaper.remove(session, this.req.dir, { node, prefix });
    let listing = await this.retrying(session, () => listChildren(session, this.req.dir));
    for (;;) {
      const children = listing?.children ?? [];
      if (children.length === 0) {
        await this.stop.race(removeIfEmpty(session, this.req.dir));
        return RESTART;
      }
      if (this.req.timeoutMs === 0) return null;
      listing = await this.waitAndRead(session, `${this.req.dir}/${children[0]}`);
    }
  }

  /**
   * Watches the one node that blocks us (no herd), waits for it to change or go, and reads
   * the directory again: that read leaves as the notification arrives (`waitForChange`).
   */
  private async waitAndRead(session: ZkSession, path: string): Promise<Listing | null> {
    const read = (): Promise<Listing | null> => listChildren(session, this.req.dir);
    let woken = (await this.retrying(session, () => waitForChange(session, path, this.stop, read))).sent;
    return this.retrying(session, () => {
      const request = woken ?? read();
      woken = undefined; // a retry after a connection loss reads anew
      return request;
    });
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
   * Deletes the node of an attempt that did not get the lock. While connected we wait for
   * the delete, so a failed acquire returns with nothing left behind; across a connection
   * loss the delete carries on in the background (the reaper retries it).
   */
  private async abandon(session: ZkSession, prefix: string, node: string | undefined): Promise<void> {
    if (session.isLost) return;
    await session.whileConnected(this.ctx.reaper.remove(session, this.req.dir, { node, prefix }));
  }
}

/**
 * Sends the create of a lock node and, right behind it in one socket write, the read of
 * its directory: per-session FIFO order makes the read see the create.
 */
export function sendCreate(
  session: ZkSession,
  path: string,
  dir: string,
  data: Buffer,
): Pick<SentCreate, 'created' | 'listed'> {
  return session.sendingTogether(() => ({
    created: session.create(path, data, 'ephemeral-sequential'),
    listed: listChildren(session, dir).catch(() => null),
  }));
}

/** What every acquisition of one backend shares. */
export interface AcquisitionContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  /** Written into every lock node, so `contenders()` can say who is who. */
  readonly identity: Buffer;
}

export interface AcquisitionRequest {
  readonly name: string;
  /** The lock's directory: `<rootPath>/<encoded name>`. */
  readonly dir: string;
  readonly mode: LockMode;
  /** How our node is named (resolved: the call's, else the client's). */
  readonly nodeFormat: NodeFormat;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** The first create, sent already by the caller (a multi-lock sends those of all names as one transaction). */
  readonly sent?: SentCreate;
}

/**
 * A create of this call's node sent by someone else on `session`, its name starting with
 * `prefix`. `created` resolves with the node's path, or `undefined` when it certainly was
 * not created (the call then creates it itself); it rejects like the create itself would
 * (a connection loss: the guid lookup then tells whether it happened).
 */
export interface SentCreate {
  readonly session: ZkSession;
  readonly prefix: string;
  readonly created: Promise<string | undefined>;
  /** The directory's children read, sent right behind the create (`null` if it failed). */
  readonly listed: Promise<Listing | null>;
  /** Called by the attempt that takes this create as its own (a sender may send only what is taken). */
  readonly claim?: () => void;
}

export interface Grant {
  readonly session: ZkSession;
  readonly node: string;
  readonly fencingToken: bigint;
}

/** What every lease acquisition of one backend shares. */
export interface LeaseContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  readonly directories: LeaseDirectories;
  /** Written into every lease node, so `leaseContenders()` can say who is who. */
  readonly identity: Buffer;
}

export interface LeaseRequest extends SemaphoreRef {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

export interface LeaseGrant {
  readonly session: ZkSession;
  readonly node: string;
}
