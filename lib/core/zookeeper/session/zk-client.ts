import { EventEmitter, setMaxListeners } from 'node:events';

import {
  LockClientClosedError,
  LockClientNotStartedError,
  ZkConnectionError,
  type ZkServerRefusedError,
  type ZkSessionLostError,
} from '../../errors/errors.js';
import { lockMessages } from '../../errors/messages.js';
import { deadline } from '../../util/deadline.js';
import { publishSession, type SessionMessage } from '../../diagnostics/diagnostics.js';
import { refusedConnectWatch } from './refused-connect-watch.js';
import { REFUSED_CONNECT_MS, SPIN_DELAY_MS, type ResolvedZkClientOptions, chrootOf } from './zk-client-options.js';
import { ZkRequestCounter } from './session-call.js';
import type { ServerFacts } from './server-check.js';
import { ClientOutage } from './client-outage.js';
import { ZkSession, type ZkReattach } from './zk-session.js';

/**
 * Keeps one live ZooKeeper session: connects with a deadline, and when a session is lost
 * (expired, or out of contact for its whole timeout) builds the next one, since
 * node-zookeeper-client never does: the same server session if the server still has it
 * (see `onSessionLost`). Events: `session` (new ZkSession), `session-lost`
 * (ZkSessionLostError, and whether the next session asks the server for it back),
 * `disconnected`, `connected`, `at-risk` (the session and how long it has gone unproven:
 * held locks are lost), `recovered` (trusted again for new grants),
 * `server-refused` (the session and a ZkServerRefusedError: a server left), `server-checked`
 * (the session, the server, and what it said of itself, `undefined` if nothing), `closed`.
 * Each session event passes the session it is about.
 */
export class ZkClient extends EventEmitter {
  readonly options: ResolvedZkClientOptions;
  readonly counter = new ZkRequestCounter();
  /** Since when no session has been connected: what `LockUnavailableError` says. */
  readonly outage = new ClientOutage(this);
  private current: ZkSession | undefined;
  private starting: Promise<void> | undefined;
  private readonly retiring = new Set<Promise<void>>();
  private readonly closedController = new AbortController();

  /** A client that has not connected yet: `start()` connects it. */
  constructor(options: ResolvedZkClientOptions) {
    super();
    setMaxListeners(0, this.closedController.signal); // one listener per wait in flight, not a leak
    this.options = options;
  }

  /** A connected client, or a `ZkConnectionError` naming the connection string. */
  static async connect(options: ResolvedZkClientOptions): Promise<ZkClient> {
    const client = new ZkClient(options);
    await client.start();
    return client;
  }

  /**
   * Opens the first session; fails with a `ZkConnectionError` if no server answers in time,
   * a `ZkServerRefusedError` if the servers that did are ones locks cannot rely on
   * (observers, a timeout under 2 × tickTime). Idempotent.
   */
  start(): Promise<void> {
    return (this.starting ??= this.open());
  }

  private async open(): Promise<void> {
    if (this.isClosed) throw this.closedSignal.reason;
    const session = (this.current = this.openSession());
    const { connectionString, connectTimeoutMs } = this.options;
    const timeout = deadline(connectTimeoutMs, () => new Error(`no session within ${connectTimeoutMs} ms`));
    const refusedMs = Math.min(REFUSED_CONNECT_MS, connectTimeoutMs);
    const refused = refusedConnectWatch(
      session,
      refusedMs,
      () => new Error(`every connection refused for ${refusedMs} ms`),
    );
    const unfit = everyServerUnfit(session, connectionString);
    try {
      // Not through a server the liveness proof does not hold through: the session leaves it.
      await session.whenServerChecked(AbortSignal.any([timeout.signal, refused.signal, unfit.signal]));
    } catch (cause) {
      await this.close();
      if (session.refusal && !refused.signal.aborted) throw session.refusal;
      const message = refused.signal.aborted
        ? lockMessages.connectRefused(connectionString, refusedMs)
        : lockMessages.connectFailed(connectionString, connectTimeoutMs);
      throw new ZkConnectionError(message, connectionString, cause, refused.signal.aborted ? 'refused' : 'timeout');
    } finally {
      timeout.clear();
      refused.clear();
      unfit.clear();
    }
    await this.checkChroot(session);
  }

  /** A chroot in the connection string must exist: ZooKeeper does not create it. */
  private async checkChroot(session: ZkSession): Promise<void> {
    const { connectionString } = this.options;
    const chroot = chrootOf(connectionString);
    if (!chroot || (await session.exists('/'))) return;
    await this.close();
    throw new ZkConnectionError(
      lockMessages.missingChroot(connectionString, chroot),
      connectionString,
      undefined,
      'chroot',
    );
  }

  /** The session in use now (possibly disconnected, being replaced, or closed). */
  get session(): ZkSession {
    if (!this.current) throw new LockClientNotStartedError();
    return this.current;
  }

  /** Aborts with `LockClientClosedError` when the client is closed. */
  get closedSignal(): AbortSignal {
    return this.closedController.signal;
  }

  /** Whether `start()` has opened a session (it may since have been closed). */
  get isStarted(): boolean {
    return this.current !== undefined;
  }

  get isClosed(): boolean {
    return this.closedController.signal.aborted;
  }

  /** The current session, once it is not lost; fails if the client is closed. */
  liveSession(): ZkSession {
    if (this.isClosed) throw this.closedController.signal.reason;
    return this.session;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.closedController.abort(new LockClientClosedError());
    await this.current?.close();
    await Promise.all(this.retiring);
    this.emit('closed');
    publishSession(this, () => ({ state: 'closed' }));
  }

  /** `reattach`: the server session to ask back, see `onSessionLost`. */
  private openSession(reattach?: ZkReattach): ZkSession {
    const session = new ZkSession({
      connectionString: this.options.connectionString,
      sessionTimeoutMs: this.options.sessionTimeoutMs,
      spinDelayMs: SPIN_DELAY_MS,
      counter: this.counter,
      credentials: this.options.credentials,
      reattach,
    });
    const state = (name: SessionMessage['state']) => () =>
      publishSession(this, () => ({ state: name, sessionId: `0x${session.id}`, server: session.server }));
    session.on('connected', () => this.emit('connected', session)).on('connected', state('connected'));
    session.on('disconnected', () => this.emit('disconnected', session)).on('disconnected', state('disconnected'));
    session
      .on('at-risk', (unprovenForMs: number) => this.emit('at-risk', session, unprovenForMs))
      .on('at-risk', state('at-risk'));
    session.on('recovered', () => this.emit('recovered', session)).on('recovered', state('recovered'));
    session.on('server-refused', (error: ZkServerRefusedError) => this.emit('server-refused', session, error));
    session.on('server-checked', (server: string, facts?: ServerFacts) =>
      this.emit('server-checked', session, server, facts),
    );
    session.once('lost', (error: ZkSessionLostError) => this.onSessionLost(session, error));
    return session;
  }

  /**
   * A session lost by the client's own reckoning (no proof for its whole timeout) may live
   * on at the server: a server restarted on its data revives every session it had, and a
   * client cut off past its deadline may come back before the server expired it. The next
   * session object asks for it back, so the client never has two, and deletes the nodes the
   * lost one left before anything else is sent (see `ReattachSettling`), but for those
   * whose owners have not released them: their work may still run; a fresh
   * session only if the server says it expired. One the server expired, closed or refused
   * is not asked back.
   */
  private onSessionLost(session: ZkSession, error: ZkSessionLostError): void {
    session.removeAllListeners();
    const retired = session.close().finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
    if (this.isClosed || session !== this.current) return session.succeededBy(undefined);
    publishSession(this, () => ({ state: 'lost', sessionId: `0x${error.sessionId}` }));
    const reattach = session.reattachment();
    this.current = this.openSession(reattach);
    // A holder that releases later deletes its node through the re-attached object (see `NodeReaper`).
    session.succeededBy(reattach && this.current);
    this.emit('session-lost', error, reattach !== undefined);
    this.emit('session', this.current);
  }
}

/** Aborts once the session has left as many servers as the connection string names, each as unfit for locks. */
function everyServerUnfit(session: ZkSession, connectionString: string): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const servers = connectionString.split('/')[0].split(',').length;
  const onRefused = (): void => {
    if (session.refusedServers >= servers) controller.abort(session.refusal);
  };
  session.on('server-refused', onRefused);
  return { signal: controller.signal, clear: () => session.removeListener('server-refused', onRefused) };
}
