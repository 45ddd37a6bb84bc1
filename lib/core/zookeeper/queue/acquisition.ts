import { LockAbortedError, LockClientClosedError, ZkSessionLostError } from '../../errors/errors.js';
import { answerAtOnce } from '../session/client-outage.js';
import type { ZkClient } from '../session/zk-client.js';
import type { ZkSession, ZkWatchListener } from '../session/zk-session.js';
import { isZkCode } from '../session/zk-error-code.js';
import { deadline } from '../../util/deadline.js';
import { longTimeout } from '../../util/long-timeout.js';
import { Stop } from '../../util/stop.js';
import type { DirectorySweeper } from './directory-sweeper.js';
import { listChildren, removeIfEmpty, type Listing } from './directory.js';
import type { NodeHandle } from './node-handle.js';
import type { NodeReaper } from './node-reaper.js';
import type { ReleaseMode } from '../../port/lock-backend.js';

/** What every acquisition of one backend shares. */
export interface AcquisitionContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  /** Written into every lock and lease node, so `contenders()` can say who is who. */
  readonly identity: Buffer;
}

export interface AcquisitionRequest {
  readonly name: string;
  /** The lock's (or semaphore's) directory: `<rootPath>/<encoded name>`. */
  readonly dir: string;
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

/** Our node, holding, in the session that holds it. */
export interface Grant {
  readonly session: ZkSession;
  readonly node: string;
}

/** A watch set with a read: `fired` resolves when it fires; `dispose` drops our listener. */
export interface Wake {
  readonly fired: Promise<void>;
  dispose(): void;
}

/** A children read, with the watch it set when it set one. */
export interface View {
  readonly listing: Listing;
  readonly wake?: Wake;
}

/**
 * What a waiter's wait ended with: the directory read already (a lock's read leaves from the
 * notification itself), or the next read to make, with a children watch or without.
 */
export type Woken = { readonly listing: Listing } | { readonly watchChildren: boolean };

/** Runs a request again through connection losses (the caller's `retrying`). */
export type Retrying = <T>(request: () => Promise<T>) => Promise<T>;

/** How a change waits: through connection losses, and no longer than the call's own stop. */
export interface ChangeIo {
  readonly retrying: Retrying;
  readonly stop: Stop;
}

/** The I/O of one attempt in one session, lent to the driver. */
export interface QueueIo extends ChangeIo {
  readonly session: ZkSession;
  /** Watches the node at `path`, waits for it to change or go, and reads the directory (see `waitForChange`). */
  waitAndRead(path: string): Promise<Listing>;
}

/** Of a recipe's positions (`port/`), the loop acts on `missing`, `retire` and `holding`; any other is a wait. */
export type HoldingPosition<P> = Extract<P, { readonly kind: 'holding' }>;
export type WaitingPosition<P> = Exclude<P, { readonly kind: 'missing' | 'retire' | 'holding' }>;

/**
 * What one recipe (a lock, a lease) tells the queue loop: Curator's `LockInternalsDriver`.
 * The pure rules (positions, our nodes by prefix) come from `port/lock-queue.ts` and
 * `port/lease-queue.ts`; the rest is the recipe's own I/O.
 */
export interface QueueDriver<P extends { readonly kind: string }, G extends Grant> {
  /** Names `LockUnavailableError`'s subject, for a try that meets an outage. */
  readonly subject: string;
  /** A new attempt's node name prefix (its guid and marker). */
  newPrefix(): string;
  /** The nodes among `children` whose name starts with `prefix`, lowest sequence first. */
  readonly ours: (children: readonly string[], prefix: string) => string[];
  positionOf(children: readonly string[], node: string): P;
  timeoutError(timeoutMs: number): Error;
  /** Before each create: the directory is (made) ours. */
  prepare?(io: QueueIo): Promise<void>;
  /** The directory vanished under a create: it is made again. */
  makeDirectory(io: QueueIo): Promise<void>;
  /**
   * Checks the directory on each listing that holds our node (`first`: the first such one).
   * `false`: our node goes (`leave` deletes it, if the driver must act after) and we queue again.
   * A plain `true` costs no turn of the event loop.
   */
  checkDirectory(io: QueueIo, listing: Listing, first: boolean, leave: () => Promise<void>): boolean | Promise<boolean>;
  /** Waits for the wake-up `position` calls for. */
  wait(io: QueueIo, position: WaitingPosition<P>, view: View): Promise<Woken>;
  /**
   * For a try (`timeoutMs: 0`) that would be refused: clears what blocks it if that turns
   * out stale (a kept hold past its end), resolving the next read to make; else `undefined`.
   */
  cleared?(io: QueueIo, position: WaitingPosition<P>): Promise<Woken | undefined>;
  /** Our node holds: what the caller gets (a fencing token, a signal to our successor). */
  grant(io: QueueIo, node: string, listing: Listing, position: HoldingPosition<P>): G;
}

const RESTART = Symbol('restart');

/** A directory that does not exist, as a listing: our node is missing from it. */
const EMPTY_LISTING: Listing = { children: [], stat: { pzxid: 0n, czxid: 0n } };

/**
 * One call to acquire a lock or a lease: the ZooKeeper queue recipe (the ZooKeeper recipes
 * page) with the recoveries the mature clients learned, the recipe's own steps taken from
 * its driver. Resolves with a grant, `null` when `timeoutMs` is 0 and none is free, or
 * rejects with the reason it stopped (`LockTimeoutError`, `LockAbortedError`,
 * `LockClientClosedError`); in every failure the node it created is deleted.
 */
export class QueueAcquisition<P extends { readonly kind: string }, G extends Grant> {
  private readonly stop = new Stop();
  /** The first attempt's create, if the caller sent it; used once, in its own session. */
  private sent: SentCreate | undefined;
  /** `performance.now()` past which no grant reaches the caller; none for a try (`timeoutMs` 0) or `Infinity`. */
  private deadlineAt = Infinity;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly driver: QueueDriver<P, G>,
    private readonly req: AcquisitionRequest,
  ) {
    this.sent = req.sent;
  }

  /** Stops the wait with `reason` (the client is closing). */
  cancel(reason: unknown): void {
    this.stop.stop(reason);
  }

  async run(): Promise<G | null> {
    const { name, timeoutMs, signal } = this.req;
    if (timeoutMs > 0) this.deadlineAt = performance.now() + timeoutMs;
    // timeoutMs 0 never waits for a holder, so it needs no timer (one firing at once
    // would cut short the create and the read that tell whether the lock is free).
    const timer =
      timeoutMs > 0 ? longTimeout(() => this.stop.stop(this.driver.timeoutError(timeoutMs)), timeoutMs) : undefined;
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
  private async attempt(session: ZkSession): Promise<G | null | typeof RESTART> {
    const sent = this.sent?.session === session ? this.sent : undefined;
    this.sent = undefined;
    // A try (`timeoutMs: 0`) answers while no session is connected. Before the claim: a try
    // refused here leaves a group's create to nobody, so it is not sent.
    const offline =
      this.req.timeoutMs === 0
        ? answerAtOnce(this.ctx.client.outage, session, this.stop, this.driver.subject)
        : undefined;
    sent?.claim?.();
    const prefix = sent?.prefix ?? this.driver.newPrefix();
    const io = this.io(session);
    let node: string | undefined;
    let granted = false;
    let withdrawn = false;
    // The driver's checks may delete our node themselves before acting (see `checkDirectory`).
    const leave = (): Promise<void> => {
      withdrawn = true;
      return this.abandon(session, prefix, node);
    };
    try {
      if (this.driver.prepare) await this.driver.prepare(io);
      let listing: Listing | undefined;
      ({ node, listing } = await this.createNode(session, prefix, sent));
      let view = listing ? { listing } : await this.read(session, false);
      let directoryChecked = false;
      for (;;) {
        let woken: Woken;
        try {
          ({ listing } = view);
          node = this.keepOne(session, prefix, node, listing.children);
          const position = this.driver.positionOf(listing.children, node);
          // Missing: our node was deleted under a live session (by hand): queue again.
          if (position.kind === 'missing') return RESTART;
          const checked = this.driver.checkDirectory(io, listing, !directoryChecked, leave);
          if (checked !== true && !(await checked)) return RESTART;
          directoryChecked = true;
          if (position.kind === 'retire') return await this.retire(io, prefix, node);
          if (position.kind === 'holding') {
            // A long wait wrote nothing: one write first, so that the grant is trusted.
            if (session.proofIsStale) await this.retrying(session, () => session.barrier());
            this.stop.throwIfStopped(); // a grant after the deadline (or a drop, for a try) never reaches the caller
            granted = true;
            return this.driver.grant(io, node, listing, position as HoldingPosition<P>);
          }
          if (this.req.timeoutMs > 0) woken = await this.driver.wait(io, position as WaitingPosition<P>, view);
          else {
            const cleared = await this.driver.cleared?.(io, position as WaitingPosition<P>);
            if (!cleared) return null;
            woken = cleared;
          }
        } finally {
          view.wake?.dispose();
        }
        view = 'listing' in woken ? { listing: woken.listing } : await this.read(session, woken.watchChildren);
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

  /**
   * Waits for `work`, a step between the grant and the caller (a revocable lock's watch,
   * one more round trip), no longer than the call's deadline: past it, rejects with the
   * timeout the call would have met without the grant, so the caller is never granted late.
   */
  async withinDeadline(work: Promise<void>): Promise<void> {
    const expired = deadline(this.deadlineAt - performance.now(), () => undefined);
    try {
      await Promise.race([work, new Promise((resolve) => expired.signal.addEventListener('abort', resolve))]);
    } finally {
      expired.clear();
    }
    // The timer, not only the clock: a timer may fire a fraction of a millisecond before performance.now() reaches it.
    if (expired.signal.aborted || performance.now() >= this.deadlineAt)
      throw this.driver.timeoutError(this.req.timeoutMs);
  }

  private io(session: ZkSession): QueueIo {
    return {
      session,
      stop: this.stop,
      retrying: (request) => this.retrying(session, request),
      waitAndRead: (path) => this.waitAndRead(session, path),
    };
  }

  /**
   * Creates our ephemeral sequential node, with the children read sent right behind it:
   * per-session FIFO order makes the read see the create, so the common case costs one
   * round trip. A create whose reply is lost may still have happened: after reconnecting
   * (same session) we look for our guid before creating again, so there is never a
   * second node. A vanished directory is made again (by the driver: a semaphore's holds
   * its number of leases). `sent`: the first create, already sent by the caller (a
   * multi-lock's one transaction); made here if it did not happen.
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
          await this.driver.makeDirectory(this.io(session));
          continue;
        }
        if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
        await session.whenConnected(this.stop.signal);
        // The barrier first: the server we reconnected to may lag behind the leader, and
        // would hide a create that did happen; we would then queue a second node behind it.
        await this.retrying(session, () => session.barrier());
        const listing = await this.retrying(session, () => listChildren(session, this.req.dir));
        const [found] = this.driver.ours(listing?.children ?? [], prefix);
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
    const ours = this.driver.ours(children, prefix);
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
  private async retire(io: QueueIo, prefix: string, node: string): Promise<null | typeof RESTART> {
    const { session } = io;
    await this.ctx.reaper.remove(session, this.req.dir, { node, prefix });
    let listing = (await this.retrying(session, () => listChildren(session, this.req.dir))) ?? EMPTY_LISTING;
    for (;;) {
      const { children } = listing;
      if (children.length === 0) {
        await this.stop.race(removeIfEmpty(session, this.req.dir));
        return RESTART;
      }
      if (this.req.timeoutMs === 0) return null;
      listing = await io.waitAndRead(`${this.req.dir}/${children[0]}`);
    }
  }

  /** The directory's children, with a children watch when `watch` (what a lease's head waits on). */
  private async read(session: ZkSession, watch: boolean): Promise<View> {
    const { dir } = this.req;
    if (!watch) return { listing: (await this.retrying(session, () => listChildren(session, dir))) ?? EMPTY_LISTING };
    let listener!: () => void;
    const fired = new Promise<void>((resolve) => (listener = resolve));
    const wake: Wake = { fired, dispose: () => session.unwatch(dir, listener) };
    try {
      const listing = await this.retrying(session, () => session.watchChildren(dir, listener));
      return listing ? { listing, wake } : { listing: EMPTY_LISTING };
    } catch (error) {
      wake.dispose();
      throw error;
    }
  }

  /**
   * Watches the one node that blocks us (no herd), waits for it to change or go, and reads
   * the directory again: that read leaves as the notification arrives (`waitForChange`).
   */
  private async waitAndRead(session: ZkSession, path: string): Promise<Listing> {
    const read = (): Promise<Listing | null> => listChildren(session, this.req.dir);
    let woken = (await this.retrying(session, () => waitForChange(session, path, this.stop, read))).sent;
    const listing = await this.retrying(session, () => {
      const request = woken ?? read();
      woken = undefined; // a retry after a connection loss reads anew
      return request;
    });
    return listing ?? EMPTY_LISTING;
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
   * Deletes the node of an attempt that got nothing. While connected we wait for the
   * delete, so a failed acquire returns with nothing left behind; across a connection
   * loss the delete carries on in the background (the reaper retries it). A lease head's
   * children watch goes with it: our own delete fires it.
   */
  private async abandon(session: ZkSession, prefix: string, node: string | undefined): Promise<void> {
    if (session.isLost) return;
    await session.whileConnected(
      this.ctx.reaper.remove(session, this.req.dir, { node, prefix, find: this.driver.ours }),
    );
  }
}

/** Releases `handle`, a grant its caller will not get, and rethrows why. */
function giveBack(handle: NodeHandle): (error: unknown) => Promise<never> {
  return async (error) => {
    await handle.release();
    throw error;
  };
}

/**
 * Waits for `path` (the one node a waiter queues behind: no herd) to change or go; a lost
 * session wakes every watch listener, ending this too.
 *
 * `next`, the request the waiter sends once woken (its read of the queue), is sent from
 * the notification itself, in the tick that delivers it, as a plain-callback client would:
 * going through the promise chain first costs several turns before the write, on the
 * critical path of every handoff. Resolves with that request in `sent` (boxed, so that it
 * is not awaited here), or without it when nothing was sent (the node was gone already, or
 * the session is lost): the caller then sends its own. The request's rejection is the
 * caller's to handle when it takes it.
 */
export async function waitForChange<T>(
  session: ZkSession,
  path: string,
  stop: Stop,
  next?: () => Promise<T>,
): Promise<{ readonly sent?: Promise<T> }> {
  let sent: Promise<T> | undefined;
  let listener!: ZkWatchListener;
  const fired = new Promise<void>(
    (resolve) =>
      (listener = () => {
        if (next && !session.isLost && !stop.isStopped) {
          sent = next();
          sent.catch(() => undefined); // taken by the caller; never an unhandled rejection if it stopped
        }
        resolve();
      }),
  );
  try {
    if (!(await stop.race(session.watchData(path, listener)))) return {};
    await stop.race(fired);
    return { sent };
  } finally {
    session.unwatch(path, listener);
  }
}

/**
 * Sends the create of a queue node and, right behind it in one socket write, the read of
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

/** What a recipe shares with its backend: the acquisitions' context, and the waits and holds `close()` ends. */
export interface QueueHost extends AcquisitionContext {
  /** Waits under way, so that shutdown can cancel them. */
  readonly waits: Map<{ cancel(reason: unknown): void }, Promise<unknown>>;
  /** Locks and leases held, so that shutdown can release them. */
  readonly held: Set<NodeHandle>;
  /** Connects on first use of a backend made unconnected. */
  startedOnce(): Promise<void>;
  /** When a release resolves unless its call says (the client's `release` option). */
  readonly release: ReleaseMode;
}

/**
 * One acquire of a recipe: the acquisition `start` makes once connected, tracked while it waits (`close()` cancels it),
 * and its grant as the handle `handleOf` makes, tracked while held. `armed`: the handle's
 * watches, set before the acquire resolves unless the connection dropped meanwhile.
 * `null`: not free before `timeoutMs`, 0 being a try.
 */
export async function acquireNode<P extends { readonly kind: string }, G extends Grant, H extends NodeHandle>(
  host: QueueHost,
  start: () => QueueAcquisition<P, G>,
  handleOf: (grant: G, onReleased: (handle: NodeHandle) => void) => { handle: H; armed?: Promise<void> },
): Promise<H | null> {
  const { client, waits, held } = host;
  if (!client.isStarted) await host.startedOnce(); // no extra turn of the event loop once started
  if (client.isClosed) throw new LockClientClosedError();
  const acquisition = start();
  const running = acquisition.run();
  waits.set(acquisition, running);
  try {
    const grant = await running;
    if (!grant) return null;
    // Checked against the clock now, not only by a timer: a grant that comes back to an
    // event loop blocked past the session's deadline is born lost.
    grant.session.checkTrust();
    const { handle, armed } = handleOf(grant, (released) => held.delete(released));
    held.add(handle);
    // The watch (a revocable lock's) is set when the acquire resolves, unless the connection
    // dropped meanwhile (it is set on reconnect then): a lock is never held up by a revocation watch.
    // Its round trip counts in the call's deadline: past it the grant is given back.
    if (armed) await acquisition.withinDeadline(grant.session.whileConnected(armed)).catch(giveBack(handle));
    return handle;
  } finally {
    waits.delete(acquisition);
  }
}
