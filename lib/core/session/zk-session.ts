import { EventEmitter, setMaxListeners } from 'node:events';

import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError } from '../errors/zk-operation.error.js';
import { ZkSessionLostError } from '../errors/zk-session-lost.error.js';
import { abortable } from '../util/abortable.js';
import {
  connectedServer,
  dropConnection,
  dropStaleBytesOnConnect,
  forceCloseClient,
  isClientStopped,
  onConnecting,
  onSocketOutcome,
  queueRequest,
  sendingTogether,
  whenClientClosed,
} from './zk-client.internals.js';
import { SessionLiveness, type LivenessHooks } from './session-liveness.js';
import type { ZkCredentials } from './zk-credentials.js';
import { installJuteCodec, newMultiReadRequest } from './wire/jute-codec.install.js';
import type { MultiResult, ZkReadOp } from './wire/multi-read.wire.js';
import { MultiReadSupport } from './multi-read.support.js';
import type { ZkRequestCounter } from './zk-request.counter.js';
import { InflightRequests } from './inflight.requests.js';
import { TrustGate } from './trust.gate.js';
import { ZkWatchRegistry } from './zk-watch.registry.js';

export interface ZkSessionConfig {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly spinDelayMs: number;
  readonly counter: ZkRequestCounter;
  /** Digest credentials: sent on every connect, and the ACL of every node created. */
  readonly credentials?: ZkCredentials;
}

export interface ZkStat {
  /** zxid of the last change to this node's children, as ZooKeeper's signed 64-bit long. */
  readonly pzxid: bigint;
  readonly czxid: bigint;
  /** zxid of the last change to this node's data (its creation, or a later `setData`). */
  readonly mzxid?: bigint;
  /** Bytes of data the node holds (a lease directory's marker, for one). */
  readonly dataLength?: number;
}

export type ZkWatchListener = (event: { readonly type: string; readonly path: string }) => void;

export type ZkNodeMode = 'persistent' | 'ephemeral-sequential';

export type { ZkReadOp } from './wire/multi-read.wire.js';

/** One read of a `multiRead`: the children, or the data and stat, or the ZooKeeper error it met (e.g. `NO_NODE`). */
export type ZkReadResult =
  { readonly children: string[] } | { readonly data: Buffer; readonly stat: ZkStat } | { readonly error: string };

/** One write of a `multi` transaction. */
export type ZkMultiOp =
  | { readonly op: 'create'; readonly path: string; readonly data: Buffer; readonly mode: ZkNodeMode }
  | { readonly op: 'remove'; readonly path: string };

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

const CREATE_MODES: Record<ZkNodeMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  'ephemeral-sequential': zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

/**
 * One ZooKeeper session, over one node-zookeeper-client instance, as promises.
 *
 * It covers the client's gaps: no read timeout (a silent server is detected and the
 * connection dropped, see `SessionLiveness`), expiry reported only on the next contact
 * (the session is declared lost once the server may have expired it), and requests queued
 * while disconnected that the client never answers once the session dies (rejected).
 * `signal` aborts, with a `ZkSessionLostError`, the moment the session is known or
 * presumed gone; `onDistrust` listeners are told earlier, when the server *may* expire it
 * within the safety margin, which is when holders must stop trusting their locks.
 * Events: `connected`, `disconnected`, `at-risk`, `lost` (error); `tcp-accepted` and
 * `tcp-failed` (error) for each TCP connection attempt.
 */
export class ZkSession extends EventEmitter {
  private readonly lostController = new AbortController();
  private readonly client: zookeeper.Client;
  private readonly inflight = new InflightRequests();
  private readonly watchers = new ZkWatchRegistry();
  private readonly liveness: SessionLiveness;
  private readonly acl: zookeeper.ACL[];
  private readonly trust = new TrustGate();
  private readonly readsTogether = new MultiReadSupport(() => connectedServer(this.client));
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

  async create(path: string, data: Buffer, mode: ZkNodeMode): Promise<string> {
    const [created] = await this.call<[string]>('create', path, (cb) =>
      this.client.create(path, data, this.acl, CREATE_MODES[mode], cb as never),
    );
    return created;
  }

  /** Whether `path` exists (without a watch). */
  async exists(path: string): Promise<boolean> {
    const [stat] = await this.call<[unknown]>('exists', path, (cb) => this.client.exists(path, cb as never));
    return Boolean(stat);
  }

  async getChildren(path: string): Promise<{ children: string[]; stat: ZkStat }> {
    const [children, stat] = await this.call<[string[], RawStat]>('getChildren', path, (cb) =>
      this.client.getChildren(path, cb as never),
    );
    return { children, stat: toStat(stat) };
  }

  async getData(path: string): Promise<Buffer | undefined> {
    const [data] = await this.call<[Buffer | undefined]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return data;
  }

  /**
   * Reads `path` with a one-shot data watch (not `exists`: on a node that just vanished
   * that leaves a creation watch that never fires). `listener` gets the watch's event
   * (or, rarely, the event of an earlier watch on the same path: a harmless early wake);
   * `false` means the node does not exist and nothing is watched. One ZooKeeper watch
   * serves every listener of a path; `unwatch` drops ours.
   */
  async watchData(path: string, listener: ZkWatchListener): Promise<boolean> {
    // Listen before asking: the reply and the notification can arrive in one TCP chunk,
    // and the client emits the notification before our promise for the reply resolves.
    this.watchers.add(path, listener);
    try {
      await this.call('getData', path, (cb) => this.client.getData(path, this.dispatch, cb as never));
      return true;
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return false;
      throw error;
    }
  }

  /**
   * `watchData` that also returns what it read: the node's data (empty when it has none),
   * or `null` when the node does not exist (then nothing is watched).
   */
  async watchDataValue(path: string, listener: ZkWatchListener): Promise<Buffer | null> {
    this.watchers.add(path, listener); // before asking, as in watchData
    try {
      const [data] = await this.call<[Buffer | undefined]>('getData', path, (cb) =>
        this.client.getData(path, this.dispatch, cb as never),
      );
      return data ?? Buffer.alloc(0);
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /**
   * `getData` with the node's creation time: its stat's `ctime`, in milliseconds since the
   * epoch by the clock of the ZooKeeper leader that committed the create.
   */
  /** Data, creation time and (for an ephemeral node) its owner session id, in hex: what `locks()` lists. */
  async getDataAndCtime(
    path: string,
  ): Promise<{ data: Buffer | undefined; ctimeMs: number; owner: string | undefined }> {
    const [data, stat] = await this.call<[Buffer | undefined, { ctime: Buffer; ephemeralOwner: Buffer }]>(
      'getData',
      path,
      (cb) => this.client.getData(path, cb as never),
    );
    const owner = stat.ephemeralOwner.readBigUInt64BE(0);
    return {
      data,
      ctimeMs: Number(stat.ctime.readBigInt64BE(0)),
      owner: owner === 0n ? undefined : `0x${owner.toString(16).padStart(16, '0')}`,
    };
  }

  /** Overwrites `path`'s data, whatever its version (a write: the leader commits it). */
  async setData(path: string, data: Buffer): Promise<void> {
    await this.call('setData', path, (cb) => this.client.setData(path, data, -1, cb as never));
  }

  /**
   * `getChildren` with a one-shot children watch (any child created or deleted fires it),
   * or `null` when `path` does not exist (then nothing is watched). As with `watchData`,
   * `listener` is registered before asking; `unwatch` drops it.
   */
  async watchChildren(path: string, listener: ZkWatchListener): Promise<{ children: string[]; stat: ZkStat } | null> {
    this.watchers.add(path, listener);
    try {
      const [children, stat] = await this.call<[string[], RawStat]>('getChildren', path, (cb) =>
        this.client.getChildren(path, this.dispatch, cb as never),
      );
      return { children, stat: toStat(stat) };
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /**
   * `watchData` answering the node's data version (how many times its data was set), or
   * `null` when the node does not exist (then nothing is watched).
   */
  async watchDataVersion(path: string, listener: ZkWatchListener): Promise<number | null> {
    this.watchers.add(path, listener);
    try {
      const [, stat] = await this.call<[unknown, { version: number }]>('getData', path, (cb) =>
        this.client.getData(path, this.dispatch, cb as never),
      );
      return stat.version;
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /** `getData` with the node's stat (without a watch). */
  async getDataAndStat(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return { data: data ?? Buffer.alloc(0), stat: toStat(stat) };
  }

  unwatch(path: string, listener: ZkWatchListener): void {
    this.watchers.remove(path, listener);
  }

  /** Listeners waiting on watches, for tests asserting that nothing is left behind. */
  watcherCount(): number {
    return this.watchers.count();
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

  /** Runs `send`; the requests it makes synchronously leave in one socket write. */
  sendingTogether<T>(send: () => T): T {
    return sendingTogether(this.client, send);
  }

  async remove(path: string): Promise<void> {
    await this.call('remove', path, (cb) => this.client.remove(path, -1, cb as never));
  }

  /**
   * Several writes as one transaction (ZooKeeper's `multi`), one request and one commit:
   * all of them happen, or none. Resolves with each op's created path (`undefined` for a
   * delete), in order. A ZooKeeper error fails the whole transaction, nothing changed, as
   * a `ZkOperationError` naming the first op that failed. As with any write, a connection
   * loss leaves unknown whether it committed (all of it or nothing).
   */
  async multi(ops: readonly ZkMultiOp[]): Promise<Array<string | undefined>> {
    const transaction = this.client.transaction();
    for (const op of ops) {
      if (op.op === 'create') transaction.create(op.path, op.data, this.acl, CREATE_MODES[op.mode]);
      else transaction.remove(op.path, -1);
    }
    let failed = 0; // the index of the op that failed the transaction
    try {
      const [results] = await this.call<[Array<{ path?: string }>]>('multi', ops[0].path, (cb) =>
        transaction.commit((error, results?: Array<{ err?: number }>) => {
          failed = Math.max(0, results?.findIndex((result) => result.err !== undefined && result.err !== 0) ?? 0);
          cb(error as Error | null, results);
        }),
      );
      return results.map((result) => result.path);
    } catch (error) {
      if (!(error instanceof ZkOperationError) || failed === 0) throw error;
      throw new ZkOperationError('multi', ops[failed].path, error.zkCode, error.cause);
    }
  }

  /**
   * Several reads as one request (ZooKeeper's `multiRead`, 3.6 and later), answered
   * together: per op, in order, its result or the ZooKeeper error it met (the other ops
   * are read all the same). Send one only when `canReadTogether()` says the server takes
   * it; a server that refuses it (UNIMPLEMENTED) is sent no other.
   */
  async multiRead(ops: readonly ZkReadOp[]): Promise<ZkReadResult[]> {
    const server = connectedServer(this.client);
    try {
      const [results] = await this.call<[MultiResult[]]>('multiRead', ops[0].path, (cb) =>
        queueRequest(this.client, newMultiReadRequest(ops), (error, payload) =>
          cb(error, (payload as { results: MultiResult[] } | undefined)?.results),
        ),
      );
      return results.map(readResultOf);
    } catch (error) {
      if (error instanceof ZkOperationError && error.zkCode === 'UNIMPLEMENTED') this.readsTogether.refused(server);
      throw error;
    }
  }

  /**
   * True when a `multiRead` can be sent now: the server connected now said it takes one.
   * Asked about a server for the first time, it asks it in the background (and says no).
   */
  canReadTogether(): boolean {
    return this.readsTogether.usable();
  }

  /**
   * Settles once `canReadTogether()` knows for the server connected now (each server is
   * asked once); `undefined` when it knows already.
   */
  readyToReadTogether(): Promise<void> | undefined {
    return this.readsTogether.ready();
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

  private readonly dispatch = (event: zookeeper.Event): void => {
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

  private call<T extends unknown[]>(
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

interface RawStat {
  pzxid: Buffer;
  czxid: Buffer;
  mzxid: Buffer;
  dataLength: number;
}

function toStat(raw: RawStat): ZkStat {
  return {
    pzxid: raw.pzxid.readBigInt64BE(0),
    czxid: raw.czxid.readBigInt64BE(0),
    mzxid: raw.mzxid.readBigInt64BE(0),
    dataLength: raw.dataLength,
  };
}

function readResultOf(result: MultiResult): ZkReadResult {
  if (result.children) return { children: result.children };
  if (result.stat) return { data: result.data ?? Buffer.alloc(0), stat: toStat(result.stat as RawStat) };
  const { create } = zookeeper.Exception as unknown as { create(code: number): Error };
  return { error: zkErrorName(create(result.err ?? 0)) };
}

function zkErrorName(error: Error): string {
  const named = error as Error & { getName?: () => string };
  return typeof named.getName === 'function' ? named.getName() : error.message;
}
