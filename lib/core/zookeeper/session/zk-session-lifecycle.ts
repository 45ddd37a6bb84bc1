import { EventEmitter, setMaxListeners } from 'node:events';

import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError, ZkServerRefusedError, ZkSessionLostError } from '../../errors/errors.js';
import {
  beforeSocketEvents,
  connectedServer,
  dropConnection,
  dropStaleBytesOnConnect,
  forceCloseClient,
  isClientStopped,
  onConnecting,
  onSocketOutcome,
  whenClientClosed,
} from './zk-client-internals.js';
import { ConnectAttemptDeadline } from './connect-attempt-deadline.js';
import { whenConnected, whenSo, whileConnected } from './connection-waits.js';
import { InflightRequests } from './inflight-requests.js';
import { OwnNodes } from './own-nodes.js';
import { MultiReadSupport } from './multi-read-support.js';
import { sessionCall, type CallContext, type Invoke } from './session-call.js';
import { SERVER_CHECK_TIMEOUT_MS, ServerFactsCache, askServer, unfitness } from './server-check.js';
import { SessionLiveness, type LivenessHooks } from './session-liveness.js';
import { TrustGate } from './trust-gate.js';
import { installJuteCodec } from './wire/jute-codec.js';
import { ZkWatchRegistry } from './zk-watch-registry.js';
import type { ZkReattach, ZkSessionConfig } from './zk-session-types.js';

/** Without credentials nodes are open to all, as with any ZooKeeper client's default. */
const OPEN_ACL = [new zookeeper.ACL(zookeeper.Permission.ALL, new zookeeper.Id('world', 'anyone'))];

/**
 * The heartbeat deletes a node that cannot exist (its parent does not): ZooKeeper still
 * commits the failed delete through the leader and a quorum, as an error transaction, so
 * its answer proves the leader took part, and it changes nothing. An idle session asks
 * whether it exists instead: its server answers alone, and nothing is logged.
 */
const HEARTBEAT_PATH = '/.nestjs-zk-lock-heartbeat/none';

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
  // Pairs wait for the answer: a short session must not wait the whole check timeout.
  private readonly serverFacts = new ServerFactsCache((server, signal) =>
    askServer(server, signal, Math.min(SERVER_CHECK_TIMEOUT_MS, Math.round(this.timeoutMs / 4))),
  );
  protected readonly readsTogether = new MultiReadSupport(
    () => connectedServer(this.client),
    (server) => this.serverFacts.get(server).then((facts) => facts?.takesMultiRead),
  );
  private connected = false;
  /** Counts connections, so that a server check answering late applies to none but its own. */
  private connection = 0;
  /** The server connected now passed its check (or could not be checked). */
  private serverChecked = false;
  private lastRefusal: ZkServerRefusedError | undefined;
  private readonly refused = new Set<string>();
  private sessionIdHex = '';
  private readonly attempt = new ConnectAttemptDeadline();
  private readonly callContext: CallContext;
  /** The ephemeral nodes made (or maybe made) in this session and not deleted. */
  protected readonly ownNodes: OwnNodes;
  /** Declared lost by the client alone (no proof for the whole timeout): the server may still keep it. */
  private presumedLost = false;
  /**
   * Set while a re-attached session deletes what the lost session object left (see
   * `settle`): every request but the session's own waits for it.
   */
  private settling: Promise<void> | undefined;
  /** True while the session sends a request of its own, which `settling` does not hold back. */
  private ownRequest = false;
  private settleRunning = false;

  constructor(private readonly config: ZkSessionConfig) {
    super();
    // One listener per request or wait in flight is how this session is used, not a leak:
    // no MaxListenersExceededWarning at the eleventh concurrent acquire.
    this.setMaxListeners(0);
    setMaxListeners(0, this.lostController.signal);
    installJuteCodec();
    const { reattach } = config;
    this.client = zookeeper.createClient(config.connectionString, {
      sessionTimeout: config.sessionTimeoutMs,
      spinDelay: config.spinDelayMs,
      retries: 0, // a blind retry of a sequential create would leave an orphan node
      // The server keeps a session it has heard from within its timeout, and revives the
      // ones it had after a restart: the first connect asks for that one back.
      ...(reattach && { sessionId: reattach.sessionId, sessionPassword: reattach.sessionPassword }),
    });
    this.ownNodes = new OwnNodes(reattach?.nodes);
    if (reattach) this.settling = new Promise((resolve) => this.once('settled', resolve));
    if (config.credentials) this.client.addAuthInfo('digest', config.credentials.authPayload());
    this.acl = config.credentials?.acl() ?? OPEN_ACL;
    this.client.on('state', (state: zookeeper.State) => this.onState(state));
    this.liveness = new SessionLiveness(() => this.timeoutMs, this.livenessHooks, performance.now());
    this.callContext = {
      counter: config.counter,
      inflight: this.inflight,
      liveness: this.liveness,
      lostReason: () => (this.isLost ? (this.signal.reason as Error) : undefined),
      expired: () => this.lose('expired by the server'),
    };
    dropStaleBytesOnConnect(this.client);
    onConnecting(this.client, () => this.onConnecting());
    onSocketOutcome(this.client, {
      accepted: () => this.emit('tcp-accepted'),
      failed: (error) => this.emit('tcp-failed', error),
    });
    // The clock is checked before any reply or notification is handled: after an event
    // loop blocked past the trust deadline, held locks' signals abort (stored and combined
    // ones too) before a reply can resume code that awaits it, and before the timer phase.
    beforeSocketEvents(this.client, () => void this.checkTrust());
    this.client.connect();
  }

  /**
   * Calls `listener` once, when locks held in this session stop being safe: the server
   * may expire the session within the safety margin, or did. At once if that is already
   * so. Returns the unsubscribe function. Grants made after the server answers again
   * subscribe afresh; earlier ones stay lost.
   */
  onDistrust(listener: (reason: Error) => void): () => void {
    const unsubscribe = this.trust.subscribe(listener);
    // The clock is not watched while nothing is held: checked now that something is.
    this.checkTrust();
    return unsubscribe;
  }

  /** Aborts (reason: `ZkSessionLostError`) when the session is gone or presumed gone. */
  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  /** The session id in hex; empty until the first connect. */
  get id(): string {
    return this.sessionIdHex;
  }

  /**
   * True when a lock granted now would be born lost for the proof's age: nothing is written
   * while the session only waits (see `SessionLiveness`). A grant then sends one `barrier()`
   * first, which pairs with the latest read the server answered: the proof is fresh again.
   */
  get proofIsStale(): boolean {
    return this.liveness.stale;
  }

  /** When ZooKeeper's leader last proved to have heard from this session (`performance.now()` time). */
  get provenAt(): number {
    return this.liveness.provenAt;
  }

  /** The server this session is connected to now (`host:port`), for logs and health checks. */
  get server(): string | undefined {
    return this.connected ? connectedServer(this.client) : undefined;
  }

  /** Connected, and (re-attached) done deleting what the lost session object left. */
  get isConnected(): boolean {
    return this.connected && !this.settling;
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

  /** The servers (and chroot) this session connects to, as configured. */
  get connectionString(): string {
    return this.config.connectionString;
  }

  /** The session timeout the server granted (the requested one until connected). */
  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** Id and password, so a test can open a second client on this session and expire it. */
  credentials(): { sessionId: Buffer; sessionPassword: Buffer } {
    return { sessionId: this.client.getSessionId(), sessionPassword: this.client.getSessionPassword() };
  }

  /**
   * Once lost by the client's own reckoning (not expired, closed or refused by the server),
   * what the next session object needs to ask the server for this session back and delete
   * the nodes this one left; otherwise `undefined`.
   */
  reattachment(): ZkReattach | undefined {
    if (!this.presumedLost || !this.sessionIdHex) return undefined;
    return { ...this.credentials(), nodes: this.ownNodes };
  }

  /**
   * Resolves once connected to a server that passed its check (see `checkServer`), or could
   * not be checked; rejects if the session is lost or `stop` aborts first.
   */
  whenServerChecked(stop?: AbortSignal): Promise<void> {
    return whenSo(this, () => this.connected && this.serverChecked, 'server-checked', stop);
  }

  /** The latest server left because the liveness proof does not hold through it, if any. */
  get refusal(): ZkServerRefusedError | undefined {
    return this.lastRefusal;
  }

  /** How many distinct servers were left so far for that reason. */
  get refusedServers(): number {
    return this.refused.size;
  }

  /** Resolves once connected; rejects if the session is lost or `stop` aborts first. */
  whenConnected(stop?: AbortSignal): Promise<void> {
    return whenConnected(this, stop);
  }

  /**
   * Waits for `work` only while connected: resolves when it settles, or as soon as the
   * connection drops (the work may go on in the background). Never rejects.
   */
  whileConnected(work: Promise<unknown>): Promise<void> {
    return whileConnected(this, work);
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

  /** A connection attempt begins: bounded, see `ConnectAttemptDeadline`. */
  private onConnecting(): void {
    // Re-attaching a live session is a short exchange with the leader, and the session's
    // proof ages meanwhile: give up on a server as fast as on a write. The first connect
    // may have to wait for a busy ensemble to create the session: allow it longer.
    const reattaching = this.sessionIdHex !== '' || this.config.reattach !== undefined;
    const bound = reattaching ? 2 * this.liveness.writeTimeoutMs : this.liveness.readTimeoutMs;
    this.attempt.begin(bound, () => {
      if (!this.connected && !this.isLost) dropConnection(this.client);
    });
  }

  private onConnected(): void {
    this.attempt.end();
    // A re-attaching object's first connect starts its clock as a new session's does: it
    // grants nothing, and sends nothing but its own requests, until `settle` has had a write
    // on the connection answered, which is the re-attach's proof (see `QuorumEvidence`).
    const firstConnect = this.sessionIdHex === '';
    this.sessionIdHex = this.client.getSessionId().toString('hex');
    this.connected = true;
    this.serverChecked = false;
    this.liveness.holdPairs(true);
    this.liveness.onConnected(this.attempt.startedAt, firstConnect);
    if (this.settling) this.settle();
    else this.emit('connected');
    this.checkServer(++this.connection);
  }

  /**
   * Deletes, first thing on the re-attached session, every node the lost session object
   * left: its holders were told their locks are lost, its waiters queued again with new
   * nodes, so those nodes only block everyone. Again on the next connection after a
   * connection loss; a delete the server refuses otherwise (an ACL changed under us) ends
   * the session, which frees them. Requests held back meanwhile go once it is done, or
   * fail with the loss when the session is lost first.
   */
  private settle(): void {
    if (this.settleRunning) return;
    this.settleRunning = true;
    const own = <T>(send: () => Promise<T>): Promise<T> => this.sendOwn(send);
    this.ownNodes
      .settle({
        barrier: () => own(() => this.barrier()),
        getChildren: (path) => own(() => this.getChildren(path)),
        remove: (path) => own(() => this.remove(path)),
      })
      .then(
        () => this.settled(),
        (error: unknown) => {
          this.settleRunning = false;
          if (this.isLost) return;
          if (!(error instanceof ZkOperationError) || error.zkCode !== 'CONNECTION_LOSS') {
            const code = error instanceof ZkOperationError ? error.zkCode : String(error);
            void this.close(
              `a node of the session could not be deleted (${code}), so the session was ended to free it`,
            );
          } else if (this.connected) this.settle(); // reconnected before the loss was told: else on the next connect
        },
      );
  }

  /** Requests held back by `settling` go (or fail, if the session was lost). */
  private settled(): void {
    if (!this.settling) return;
    this.settling = undefined;
    this.emit('settled');
    if (this.connected && !this.isLost) this.emit('connected');
  }

  /** Sends the requests `send` makes synchronously past `settling`: the session's own. */
  private sendOwn<T>(send: () => Promise<T>): Promise<T> {
    this.ownRequest = true;
    try {
      return send();
    } finally {
      this.ownRequest = false;
    }
  }

  abstract getChildren(path: string): Promise<{ children: string[] }>;
  abstract remove(path: string): Promise<void>;

  /**
   * Asks the server connected now about itself (`srvr`, `conf`; once per server, in the
   * background) and leaves it if the liveness proof does not hold through it: an observer,
   * or a timeout under 2 × its tickTime (see `unfitness`). Until it passes, no pair of
   * writes proves the session (a connect still does); a server that cannot say passes.
   */
  private checkServer(connection: number): void {
    const server = connectedServer(this.client);
    const asked = server === undefined ? Promise.resolve(undefined) : this.serverFacts.get(server);
    void asked.then((facts) => {
      if (connection !== this.connection || !this.connected || this.isLost) return;
      const unfit = facts && unfitness(facts, this.timeoutMs);
      if (!unfit || server === undefined) {
        this.serverChecked = true;
        this.liveness.holdPairs(false);
        this.emit('server-checked', server, facts);
        return;
      }
      const leave = (): void => {
        if (connection !== this.connection || !this.connected || this.isLost) return;
        this.livenessHooks.dropConnection(performance.now());
        if (this.refused.has(server)) return; // said once per server and session, not at every pass
        this.refused.add(server);
        this.lastRefusal = new ZkServerRefusedError(server, unfit, this.timeoutMs, this.config.connectionString);
        this.emit('server-refused', this.lastRefusal);
      };
      // A session given back deletes what its lost object left through whichever server
      // took it back, even one it then leaves: leaving first would fail the deletes, and
      // each re-attach there would touch the session again, its old nodes blocking everyone
      // for as long as the client kept trying (an observer as the only other server).
      if (this.settling) this.once('settled', leave);
      else leave();
    });
  }

  private onDisconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    this.liveness.onDisconnected();
    this.emit('disconnected');
  }

  private readonly livenessHooks: LivenessHooks = {
    heartbeat: () => {
      if (this.connected) this.sendOwn(() => this.barrier()).catch(() => undefined);
    },
    anchor: () => {
      if (!this.connected) return;
      const ask = (cb: Parameters<Invoke>[0]): void => this.client.exists(HEARTBEAT_PATH, cb as never);
      this.call('heartbeat', HEARTBEAT_PATH, ask, false).catch(() => undefined);
    },
    // Held locks and leases listen for distrust. A waiting acquire needs no proof until
    // its grant, which makes one when the proof is stale (`proofIsStale`).
    busy: () => this.trust.subscribed,
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
        false,
        true,
      ),
  };

  private lose(why: string, closing = false, presumed = false): void {
    if (this.isLost) return;
    this.presumedLost = presumed;
    this.liveness.stop();
    this.readsTogether.close();
    this.serverFacts.close();
    this.attempt.end();
    this.connected = false;
    const error = new ZkSessionLostError(this.sessionIdHex || 'unconnected', why);
    this.lostController.abort(error);
    this.trust.distrust(error);
    this.inflight.failAll(error);
    // Wake every waiter: its next request fails with the loss, and it starts again.
    this.watchers.fireAll('SESSION_LOST');
    this.settled();
    // close() has asked the server to end the session; otherwise drop the client.
    if (!closing && !isClientStopped(this.client)) forceCloseClient(this.client);
    this.emit('lost', error);
  }

  /** Sends one request, tracked while in flight (see `sessionCall`). */
  protected call<T extends unknown[]>(op: string, path: string, invoke: Invoke, write?: boolean): Promise<T> {
    if (this.settling && !this.ownRequest)
      return this.settling.then(() => sessionCall<T>(this.callContext, op, path, invoke, write));
    return sessionCall<T>(this.callContext, op, path, invoke, write);
  }
}
