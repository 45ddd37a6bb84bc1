import { EventEmitter, setMaxListeners } from 'node:events';

import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError } from '../errors/zk-operation.error.js';
import { ZkSessionLostError } from '../errors/zk-session-lost.error.js';
import { abortable } from '../util/abortable.js';
import { zkErrorName } from '../util/zk-error-code.js';
import {
  connectedServer,
  dropConnection,
  dropStaleBytesOnConnect,
  forceCloseClient,
  isClientStopped,
  onConnecting,
  onSocketOutcome,
  whenClientClosed,
} from './zk-client.internals.js';
import { InflightRequests } from './inflight.requests.js';
import { MultiReadSupport } from './multi-read.support.js';
import { SessionLiveness, type LivenessHooks } from './session-liveness.js';
import { TrustGate } from './trust.gate.js';
import { installJuteCodec } from './wire/jute-codec.install.js';
import { ZkWatchRegistry } from './zk-watch.registry.js';
import type { ZkSessionConfig } from './zk-session.types.js';

/** Without credentials nodes are open to all, as with any ZooKeeper client's default. */
const OPEN_ACL = [new zookeeper.ACL(zookeeper.Permission.ALL, new zookeeper.Id('world', 'anyone'))];

/**
 * The heartbeat deletes a node that cannot exist (its parent does not): ZooKeeper still
 * commits the failed delete through the leader and a quorum, as an error transaction, so
 * its answer proves the leader took part, and it changes nothing.
 */
const HEARTBEAT_PATH = '/.nestjs-zk-lock-heartbeat/none';

/** Requests the leader must commit: only their answers prove the session's life (see SessionLiveness). */
const WRITE_OPS: ReadonlySet<string> = new Set(['create', 'remove', 'heartbeat', 'setData', 'multi']);

/**
 * A ZooKeeper session's life, over one node-zookeeper-client instance: connecting, the
 * proof that the leader hears from it, trust, loss and close, and the one way requests
 * are sent (`call`). `ZkSession` adds the requests.
 */
export abstract class ZkSessionLifecycle extends EventEmitter {
  private readonly lostController = new AbortController();
  protected readonly client: zookeeper.Client;
  private readonly inflight = new InflightRequests();
  protected readonly watchers = new ZkWatchRegistry();
  private readonly liveness: SessionLiveness;
  protected readonly acl: zookeeper.ACL[];
  private readonly trust = new TrustGate();
  protected readonly readsTogether = new MultiReadSupport(() => connectedServer(this.client));
  private connected = false;
  private sessionIdHex = '';
  private attemptStartedAt = performance.now();
  private attemptDeadline: NodeJS.Timeout | undefined;

  constructor(private readonly config: ZkSessionConfig) {
    super();
    // One listener per request or wait in flight is how this session is used, not a leak:
    // no MaxListenersExceededWarning at the eleventh concurrent acquire.
    this.setMaxListeners(0);
    setMaxListeners(0, this.lostController.signal);
    installJuteCodec();
    this.client = zookeeper.createClient(config.connectionString, {
      sessionTimeout: config.sessionTimeoutMs,
      spinDelay: config.spinDelayMs,
      retries: 0, // a blind retry of a sequential create would leave an orphan node
    });
    if (config.credentials) this.client.addAuthInfo('digest', config.credentials.authPayload());
    this.acl = config.credentials?.acl() ?? OPEN_ACL;
    this.client.on('state', (state: zookeeper.State) => this.onState(state));
    this.liveness = new SessionLiveness(() => this.timeoutMs, this.livenessHooks, performance.now());
    dropStaleBytesOnConnect(this.client);
    onConnecting(this.client, () => this.onConnecting());
    onSocketOutcome(this.client, {
      accepted: () => this.emit('tcp-accepted'),
      failed: (error) => this.emit('tcp-failed', error),
    });
    this.client.connect();
  }

  /**
   * Calls `listener` once, when locks held in this session stop being safe: the server
   * may expire the session within the safety margin, or did. At once if that is already
   * so. Returns the unsubscribe function. Grants made after the server answers again
   * subscribe afresh; earlier ones stay lost.
   */
  onDistrust(listener: (reason: Error) => void): () => void {
    return this.trust.subscribe(listener);
  }

  /** Aborts (reason: `ZkSessionLostError`) when the session is gone or presumed gone. */
  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  /** The session id in hex; empty until the first connect. */
  get id(): string {
    return this.sessionIdHex;
  }

  /** When ZooKeeper's leader last proved to have heard from this session (`performance.now()` time). */
  get provenAt(): number {
    return this.liveness.provenAt;
  }

  /** The server this session is connected to now (`host:port`), for logs and health checks. */
  get server(): string | undefined {
    return this.connected ? connectedServer(this.client) : undefined;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  get isLost(): boolean {
    return this.signal.aborted;
  }

  /**
   * Whether locks of this session can be trusted at this very moment. Checks the clock
   * now (a blocked event loop runs no timer), telling `onDistrust` listeners first if not.
   */
  checkTrust(): boolean {
    return !this.isLost && this.liveness.check() && this.trust.trusted;
  }

  /** The session timeout the server granted (the requested one until connected). */
  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** Id and password, so a test can open a second client on this session and expire it. */
  credentials(): { sessionId: Buffer; sessionPassword: Buffer } {
    return { sessionId: this.client.getSessionId(), sessionPassword: this.client.getSessionPassword() };
  }

  /** Resolves once connected; rejects if the session is lost or `stop` aborts first. */
  async whenConnected(stop?: AbortSignal): Promise<void> {
    this.throwIfLost();
    if (this.connected) return;
    let onConnected!: () => void;
    const connected = new Promise<void>((resolve) => this.once('connected', (onConnected = resolve)));
    try {
      await abortable(connected, stop ? [stop, this.signal] : [this.signal]);
    } finally {
      this.removeListener('connected', onConnected);
    }
  }

  /**
   * Waits for `work` only while connected: resolves when it settles, or as soon as the
   * connection drops (the work may go on in the background). Never rejects.
   */
  async whileConnected(work: Promise<unknown>): Promise<void> {
    if (!this.connected) return;
    let stop!: () => void;
    const interrupted = new Promise<void>((resolve) => (stop = resolve));
    this.once('disconnected', stop);
    this.signal.addEventListener('abort', stop, { once: true });
    try {
      await Promise.race([work.catch(() => undefined), interrupted]);
    } finally {
      this.removeListener('disconnected', stop);
      this.signal.removeEventListener('abort', stop);
    }
  }

  /**
   * A write that changes nothing (the heartbeat's), answered once the leader committed it.
   * Per-session FIFO order then makes every later read on this connection see each write
   * of this session the leader accepted before it; and after a reconnect to another
   * server, a write of ours still in flight from the old one can no longer be accepted
   * (ZooKeeper refuses it as SESSION_MOVED). So a lookup sent after it sees for certain
   * whether a create whose reply was lost happened.
   */
  async barrier(): Promise<void> {
    try {
      await this.call('heartbeat', HEARTBEAT_PATH, (cb) => this.client.remove(HEARTBEAT_PATH, -1, cb as never));
    } catch (error) {
      if (!(error instanceof ZkOperationError) || error.zkCode === 'CONNECTION_LOSS') throw error;
    }
  }

  /**
   * Ends the session: with the server's agreement when connected (its ephemeral nodes go
   * at once), otherwise by dropping the client (they go when the server expires it).
   */
  async close(why = 'closed'): Promise<void> {
    const closed = whenClientClosed(this.client);
    if (!isClientStopped(this.client)) {
      if (this.connected) this.client.close();
      else forceCloseClient(this.client);
    }
    this.lose(why, true);
    await closed;
  }

  protected readonly dispatch = (event: zookeeper.Event): void => {
    this.config.counter.count('notification');
    this.watchers.fire(event.getName(), event.getPath());
  };

  private onState(state: zookeeper.State): void {
    if (this.isLost) return;
    const { code } = state;
    if (code === zookeeper.State.SYNC_CONNECTED.code) this.onConnected();
    else if (code === zookeeper.State.DISCONNECTED.code) this.onDisconnected();
    else if (code === zookeeper.State.EXPIRED.code) this.lose('expired by the server');
    else if (code === zookeeper.State.AUTH_FAILED.code) this.lose('authentication failed');
  }

  /**
   * A connection attempt begins. node-zookeeper-client waits for the server's answer to
   * its connect request without limit, so a server that accepts connections but never
   * answers would stall it forever: past the attempt deadline the socket is dropped and
   * the client goes on to the next server.
   */
  private onConnecting(): void {
    this.attemptStartedAt = performance.now();
    clearTimeout(this.attemptDeadline);
    // Re-attaching a live session is a short exchange with the leader, and the session's
    // proof ages meanwhile: give up on a server as fast as on a write. The first connect
    // may have to wait for a busy ensemble to create the session: allow it longer.
    const bound = this.sessionIdHex ? 2 * this.liveness.writeTimeoutMs : this.liveness.readTimeoutMs;
    this.attemptDeadline = setTimeout(() => {
      if (!this.connected && !this.isLost) dropConnection(this.client);
    }, bound);
  }

  private onConnected(): void {
    clearTimeout(this.attemptDeadline);
    const newSession = this.sessionIdHex === '';
    this.sessionIdHex = this.client.getSessionId().toString('hex');
    this.connected = true;
    this.liveness.onConnected(this.attemptStartedAt, newSession);
    this.emit('connected');
  }

  private onDisconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    this.liveness.onDisconnected();
    this.emit('disconnected');
  }

  private readonly livenessHooks: LivenessHooks = {
    heartbeat: () => {
      if (this.connected) this.barrier().catch(() => undefined);
    },
    oldestPending: (writesOnly) => this.inflight.oldest(writesOnly),
    dropConnection: (sentBefore) => {
      // The client may never call these back (a reply lost in a black hole is never
      // retried), so they fail here as a connection loss, which callers recover from.
      this.inflight.failSentBefore(sentBefore, ({ op, path }) => new ZkOperationError(op, path, 'CONNECTION_LOSS'));
      dropConnection(this.client);
    },
    atRisk: (unprovenForMs) => {
      this.trust.distrust(
        new ZkSessionLostError(
          this.sessionIdHex,
          `no proof for ${unprovenForMs} ms that ZooKeeper's leader heard from this session: it may expire the session at any moment`,
        ),
      );
      this.emit('at-risk', unprovenForMs);
    },
    recovered: () => {
      this.trust.restore(); // for grants from now on; earlier ones stay lost
      this.emit('recovered');
    },
    gone: (unprovenForMs) =>
      this.lose(
        `no proof for ${unprovenForMs} ms, the whole session timeout, that ZooKeeper's leader heard from this session: it may have expired it`,
      ),
  };

  private lose(why: string, closing = false): void {
    if (this.isLost) return;
    this.liveness.stop();
    this.readsTogether.close();
    clearTimeout(this.attemptDeadline);
    this.connected = false;
    const error = new ZkSessionLostError(this.sessionIdHex || 'unconnected', why);
    this.lostController.abort(error);
    this.trust.distrust(error);
    this.inflight.failAll(error);
    // Wake every waiter: its next request fails with the loss, and it starts again.
    this.watchers.fireAll('SESSION_LOST');
    // close() has asked the server to end the session; otherwise drop the client.
    if (!closing && !isClientStopped(this.client)) forceCloseClient(this.client);
    this.emit('lost', error);
  }

  private throwIfLost(): void {
    if (this.isLost) throw this.signal.reason;
  }

  protected call<T extends unknown[]>(
    op: string,
    path: string,
    invoke: (callback: (error: Error | null, ...results: unknown[]) => void) => void,
  ): Promise<T> {
    this.throwIfLost();
    this.config.counter.count(op);
    const write = WRITE_OPS.has(op);
    return new Promise<T>((resolve, reject) => {
      const sentAt = performance.now();
      const fail = (error: Error): void => {
        this.inflight.settle(fail);
        reject(error);
      };
      this.inflight.add({ op, path, sentAt, write }, fail);
      if (write) this.liveness.writeSent(sentAt);
      invoke((error, ...results) => {
        if (!this.inflight.settle(fail)) return; // already failed: the session was lost, or the server left
        const zkCode = error ? zkErrorName(error) : undefined;
        // Any answer from the server, success or a ZooKeeper error, is an answer.
        if (zkCode !== 'CONNECTION_LOSS' && zkCode !== 'SESSION_EXPIRED') this.liveness.answered(sentAt, write);
        if (!error) return resolve(results as T);
        if (zkCode === 'SESSION_EXPIRED') this.lose('expired by the server');
        reject(this.isLost ? this.signal.reason : new ZkOperationError(op, path, zkCode!, error));
      });
    });
  }
}
