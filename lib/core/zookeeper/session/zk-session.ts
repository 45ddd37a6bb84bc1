import { EventEmitter, setMaxListeners } from 'node:events';

import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError, type ZkServerRefusedError, ZkSessionLostError } from '../../errors/errors.js';
import {
  beforeSocketEvents,
  connectedServer,
  dropConnection,
  dropStaleBytesOnConnect,
  forceCloseClient,
  isClientStopped,
  onConnecting,
  onSocketOutcome,
  queueRequest,
  atVersion,
  sendingTogether,
  whenClientClosed,
} from './zk-client-internals.js';
import { chrootOf } from './zk-client-options.js';
import { whenConnected, whenSo, whileConnected } from './connection-waits.js';
import { InflightRequests } from './inflight-requests.js';
import { OwnNodes } from './own-nodes.js';
import type { ZkCredentials } from './zk-credentials.js';
import { ReattachSettling } from './reattach-settling.js';
import { MultiReadSupport } from './multi-read-support.js';
import { aclBytes, inRequests, type ZkMultiOp, type ZkNodeMode, type ZkOp } from './request-batches.js';
import { sessionCall, type CallContext, type Invoke, type ZkRequestCounter } from './session-call.js';
import { ServerCheck } from './server-check.js';
import { SessionLiveness, type LivenessHooks } from './session-liveness.js';
import { TrustGate } from './trust-gate.js';
import { installJuteCodec, newMultiReadRequest } from './wire/jute-codec.js';
import type { MultiResult, ZkReadOp } from './wire/multi-read.js';
import { ZkWatchRegistry, type ZkWatcher, type ZkWatchListener } from './zk-watch-registry.js';
import { readResultOf, toStat, type RawStat, type ZkReadResult, type ZkStat } from './zk-stat.js';

export type { ZkMultiOp, ZkNodeMode } from './request-batches.js';
export type { ZkReadOp } from './wire/multi-read.js';
export type { ZkReadResult, ZkStat } from './zk-stat.js';
export type { ZkWatchListener } from './zk-watch-registry.js';

/** The most ops `readAll` puts in one `multiRead` (and at most `MAX_REQUEST_BYTES` of them): its reply of lock nodes' data stays well below 1 MB too. */
export const MULTI_READ_OPS = 500;

/** Without credentials nodes are open to all, as with any ZooKeeper client's default. */
const OPEN_ACL = [new zookeeper.ACL(zookeeper.Permission.ALL, new zookeeper.Id('world', 'anyone'))];

/**
 * The heartbeat deletes a node that cannot exist (its parent does not): ZooKeeper still
 * commits the failed delete through the leader and a quorum, as an error transaction, so
 * its answer proves the leader took part, and it changes nothing. An idle session asks
 * whether it exists instead: its server answers alone, and nothing is logged.
 */
const HEARTBEAT_PATH = '/.nestjs-zk-lock-heartbeat/none';

const CREATE_MODES: Record<ZkNodeMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  ephemeral: zookeeper.CreateMode.EPHEMERAL,
  'ephemeral-sequential': zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

export interface ZkSessionConfig {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly spinDelayMs: number;
  readonly counter: ZkRequestCounter;
  /** Digest credentials: sent on every connect, and the ACL of every node created. */
  readonly credentials?: ZkCredentials;
  /** Ask the server for this session back (it was declared lost by the client alone), and delete `nodes` first. */
  readonly reattach?: ZkReattach;
}

/** A server session to ask back: its id and password, and the nodes its last session object left. */
export interface ZkReattach {
  readonly sessionId: Buffer;
  readonly sessionPassword: Buffer;
  readonly nodes: OwnNodes;
}

/**
 * The bound on one connection attempt. node-zookeeper-client waits for the server's
 * answer to its connect request without limit, so a server that accepts connections but
 * never answers would stall it forever: past the deadline `overdue` runs (the session
 * drops the socket, and the client goes on to the next server).
 */
class ConnectAttemptDeadline {
  /** When the attempt under way began (`performance.now()` time). */
  startedAt = performance.now();
  private timer: NodeJS.Timeout | undefined;

  begin(boundMs: number, overdue: () => void): void {
    this.startedAt = performance.now();
    clearTimeout(this.timer);
    this.timer = setTimeout(overdue, boundMs);
  }

  end(): void {
    clearTimeout(this.timer);
  }
}

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
 *
 * In this order: its state (connection, trust, loss, close), the reads, the reads sent
 * together, the writes, the watched reads, and the private life of the connection. It owns
 * its parts and they never reach back into it: the proof that the leader hears from it
 * (`SessionLiveness`), the check of each server (`ServerCheck`), the ephemeral nodes it may
 * have made (`OwnNodes`) and, when re-attached, their deletion first (`ReattachSettling`),
 * who waits on which watch (`ZkWatchRegistry`), and the requests in flight (`sessionCall`).
 */
export class ZkSession extends EventEmitter {
  private readonly lostController = new AbortController();
  private readonly client: zookeeper.Client;
  private readonly inflight = new InflightRequests();
  private readonly watchers = new ZkWatchRegistry(() => this.config.counter.count('notification'));
  private readonly liveness: SessionLiveness;
  private readonly acl: zookeeper.ACL[];
  private readonly trust = new TrustGate();
  private readonly serverCheck = new ServerCheck({
    server: () => connectedServer(this.client),
    timeoutMs: () => this.timeoutMs,
    connectionString: () => this.config.connectionString,
    isUp: () => this.connected && !this.isLost,
    passed: (server, facts) => {
      this.liveness.holdPairs(false);
      this.emit('server-checked', server, facts);
    },
    leave: () => this.livenessHooks.dropConnection(performance.now()),
    refused: (refusal) => this.emit('server-refused', refusal),
    whenSettled: (then) => this.settling.whenSettled(then),
  });
  private readonly readsTogether = new MultiReadSupport(
    () => connectedServer(this.client),
    (server) => this.serverCheck.facts.get(server).then((facts) => facts?.takesMultiRead),
  );
  private requestSizes: { chrootBytes: number; aclBytes: number } | undefined;
  private connected = false;
  private sessionIdHex = '';
  private readonly attempt = new ConnectAttemptDeadline();
  private readonly callContext: CallContext;
  /** The ephemeral nodes made (or maybe made) in this session and not deleted. */
  private readonly ownNodes: OwnNodes;
  /** Declared lost by the client alone (no proof for the whole timeout): the server may still keep it. */
  private presumedLost = false;
  /** A re-attached session's deleting of what its lost object left: every request but its own waits for it. */
  private readonly settling: ReattachSettling;
  private handOver: (next: ZkSession | undefined) => void = () => undefined;
  /**
   * Once lost: the session object that re-attached to the same server session and took
   * over the nodes this one left (see `reattachment`), or `undefined` when the server
   * session ended (expired, closed, refused) or the client was closed.
   */
  readonly successor = new Promise<ZkSession | undefined>((resolve) => (this.handOver = resolve));

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
    this.settling = new ReattachSettling(this.ownNodes, reattach !== undefined, {
      barrier: () => this.barrier(),
      getChildren: (path) => this.getChildren(path),
      remove: (path) => this.remove(path),
      isConnected: () => this.connected,
      isLost: () => this.isLost,
      close: (why) => void this.close(why),
      settled: () => this.settled(),
    });
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
   * True when a lock granted now would be born lost, or lost too soon, for the proof's age
   * (`SessionLiveness.stale`) or because the session is not trusted now (checked against the
   * clock). Nothing is written while the session only waits, and an event loop blocked for
   * seconds runs nothing. A grant then waits for `whenProven()` first.
   */
  get proofIsStale(): boolean {
    return this.liveness.stale || !this.checkTrust();
  }

  /**
   * Resolves once the proof is fresh (not `proofIsStale`). Usually one `barrier()` does it: it pairs with the latest
   * read the server answered a pair gap before (an idle session's heartbeat reads, see
   * `QuorumEvidence`). After a blocked event loop no such read was answered: the session
   * then proves itself as while a lock is held (`SessionLiveness.want`: heartbeat writes,
   * the clock watched), and this resolves once a pair of them proved it again. Rejects as
   * the barrier does (`CONNECTION_LOSS`: call again once connected), when the session is
   * lost (or given up: no proof within a whole timeout from now), or with `stop`'s reason.
   */
  async whenProven(stop?: AbortSignal): Promise<void> {
    if (!this.proofIsStale) return;
    const done = this.liveness.want();
    try {
      await this.barrier();
      // A proof may move and still be too old (it paired with a read from before a block).
      while (this.proofIsStale) await whenSo(this, () => !this.proofIsStale, 'proven', stop);
    } finally {
      done();
    }
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
    return this.connected && !this.settling.pending;
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

  /** Settles `successor`: `next` re-attached to this server session (from `reattachment()`), or none. */
  succeededBy(next: ZkSession | undefined): void {
    this.handOver(next);
  }

  /**
   * The node at `path` of this server session was granted to an owner: a re-attach leaves
   * it (see `OwnNodes`) until `letGo(path)` or its delete.
   */
  holding(path: string): void {
    this.ownNodes.hold(path);
  }

  /** The owner of the node at `path` released it: a re-attach deletes it if it is still there. */
  letGo(path: string): void {
    this.ownNodes.letGo(path);
  }

  /**
   * Resolves once connected to a server that passed its check (see `ServerCheck`), or could
   * not be checked; rejects if the session is lost or `stop` aborts first.
   */
  whenServerChecked(stop?: AbortSignal): Promise<void> {
    return whenSo(this, () => this.connected && this.serverCheck.passed, 'server-checked', stop);
  }

  /** The latest server left because the liveness proof does not hold through it, if any. */
  get refusal(): ZkServerRefusedError | undefined {
    return this.serverCheck.refusal;
  }

  /** How many distinct servers were left so far for that reason. */
  get refusedServers(): number {
    return this.serverCheck.refusedCount;
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

  /** Data, creation time and (for an ephemeral node) its owner session id, in hex: what `locks()` lists. */
  async getDataAndCtime(
    path: string,
  ): Promise<{ data: Buffer | undefined; ctimeMs: number; owner: string | undefined }> {
    const [data, raw] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    const { ctimeMs, owner } = toStat(raw);
    return { data, ctimeMs: ctimeMs!, owner };
  }

  /** `getData` with the node's stat (without a watch). */
  async getDataAndStat(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return { data: data ?? Buffer.alloc(0), stat: toStat(stat) };
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
   * Reads, all sent at once: as `multiRead`s of up to `MULTI_READ_OPS` ops (and
   * `MAX_REQUEST_BYTES`) when the server takes them, otherwise one request each. Per op,
   * in order, its result or the ZooKeeper error it met. Rejects when a `multiRead` fails
   * whole (a lost connection) or the session is lost.
   */
  async readAll(ops: readonly ZkReadOp[]): Promise<ZkReadResult[]> {
    if (ops.length < 2 || !this.canReadTogether()) return Promise.all(ops.map((op) => this.readOne(op)));
    const runs = this.inRequests(ops, (op) => [op], MULTI_READ_OPS);
    return (await Promise.all(runs.map((run) => this.multiRead(run)))).flat();
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
   * `items` in consecutive runs, each run's ops (`opsOf`) small enough for one `multi` or
   * `multiRead` (`MAX_REQUEST_BYTES`, at most `maxOps`): a longer request would make
   * ZooKeeper drop the connection.
   */
  inRequests<T>(items: readonly T[], opsOf: (item: T) => readonly ZkOp[], maxOps = Infinity): T[][] {
    this.requestSizes ??= {
      chrootBytes: Buffer.byteLength(chrootOf(this.connectionString) ?? '', 'utf8'),
      aclBytes: aclBytes(this.acl),
    };
    return inRequests(items, opsOf, this.requestSizes, maxOps);
  }

  /** One read of `readAll`, as a request of its own. */
  private async readOne({ op, path }: ZkReadOp): Promise<ZkReadResult> {
    try {
      if (op === 'getChildren') return { children: (await this.getChildren(path)).children };
      const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
        this.client.getData(path, cb as never),
      );
      return { data, stat: toStat(stat) };
    } catch (error) {
      if (error instanceof ZkOperationError) return { error: error.zkCode };
      throw error;
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

  async create(path: string, data: Buffer, mode: ZkNodeMode): Promise<string> {
    const ephemeral = mode !== 'persistent';
    if (ephemeral) this.ownNodes.creating(path);
    try {
      const [created] = await this.call<[string]>('create', path, (cb) =>
        this.client.create(path, data, this.acl, CREATE_MODES[mode], cb as never),
      );
      if (ephemeral) this.ownNodes.answered(path, created);
      return created;
    } catch (error) {
      if (ephemeral && refused(error)) this.ownNodes.answered(path, undefined);
      throw error;
    }
  }

  /** Overwrites `path`'s data, whatever its version or (BAD_VERSION otherwise) only at `version` (a write: the leader commits it). */
  async setData(path: string, data: Buffer, version = -1): Promise<ZkStat> {
    const [stat] = await this.call<[RawStat]>('setData', path, (cb) =>
      this.client.setData(path, data, version, cb as never),
    );
    return toStat(stat);
  }

  async remove(path: string): Promise<void> {
    try {
      await this.call('remove', path, (cb) => this.client.remove(path, -1, cb as never));
    } catch (error) {
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') this.ownNodes.removed(path);
      throw error;
    }
    this.ownNodes.removed(path);
  }

  /**
   * A lookup sent behind a barrier found no node of the ephemeral sequential create of
   * `requested` (whose reply was lost): it did not happen, or its node is gone. The session
   * stops listing it (see `OwnNodes`).
   */
  noneCreated(requested: string): void {
    this.ownNodes.answered(requested, undefined);
  }

  /**
   * Several writes as one transaction (ZooKeeper's `multi`), one request and one commit:
   * all of them happen, or none. Resolves with each op's created path (`undefined` for a
   * delete, a check or a setData), in order. A ZooKeeper error fails the whole transaction,
   * nothing changed, as a `ZkOperationError` naming the first op that failed. As with any
   * write, a connection loss leaves unknown whether it committed (all of it or nothing).
   */
  async multi(ops: readonly ZkMultiOp[]): Promise<Array<string | undefined>> {
    const transaction = this.client.transaction();
    for (const op of ops) {
      if (op.op === 'create') {
        transaction.create(op.path, op.data, this.acl, CREATE_MODES[op.mode]);
        continue;
      }
      if (op.op === 'check') transaction.check(op.path);
      else if (op.op === 'set') transaction.setData(op.path, op.data);
      else transaction.remove(op.path);
      atVersion(transaction, op.version ?? -1);
    }
    let failed = 0; // the index of the op that failed the transaction
    const ephemeral = ops.filter((op) => op.op === 'create' && op.mode !== 'persistent');
    for (const { path } of ephemeral) this.ownNodes.creating(path);
    try {
      const [results] = await this.call<[Array<{ path?: string }>]>('multi', ops[0].path, (cb) =>
        transaction.commit((error, results?: Array<{ err?: number }>) => {
          failed = Math.max(0, results?.findIndex((result) => result.err !== undefined && result.err !== 0) ?? 0);
          cb(error as Error | null, results);
        }),
      );
      ops.forEach((op, i) => {
        if (op.op === 'remove') this.ownNodes.removed(op.path);
        else if (op.op === 'create' && op.mode !== 'persistent') this.ownNodes.answered(op.path, results[i].path);
      });
      return results.map((result) => result.path);
    } catch (error) {
      // Refused whole: nothing of it happened.
      if (refused(error)) for (const { path } of ephemeral) this.ownNodes.answered(path, undefined);
      if (!(error instanceof ZkOperationError) || failed === 0) throw error;
      throw new ZkOperationError('multi', ops[failed].path, error.zkCode, error.cause);
    }
  }

  /** Runs `send`; the requests it makes synchronously leave in one socket write. */
  sendingTogether<T>(send: () => T): T {
    return sendingTogether(this.client, send);
  }

  /**
   * Reads `path` with a one-shot data watch (not `exists`: on a node that just vanished
   * that leaves a creation watch that never fires). `listener` gets the watch's event
   * (or, rarely, the event of an earlier watch on the same path: a harmless early wake);
   * `false` means the node does not exist and nothing is watched. One ZooKeeper watch
   * serves every listener of a path; `unwatch` drops ours.
   */
  async watchData(path: string, listener: ZkWatchListener): Promise<boolean> {
    return (await this.watchedRead(path, listener, 'getData', () => true)) ?? false;
  }

  /**
   * `watchData` that also returns what it read: the node's data (empty when it has none),
   * or `null` when the node does not exist (then nothing is watched).
   */
  async watchDataValue(path: string, listener: ZkWatchListener): Promise<Buffer | null> {
    return this.watchedRead(path, listener, 'getData', ([data]) => (data as Buffer | undefined) ?? Buffer.alloc(0));
  }

  /**
   * `getChildren` with a one-shot children watch (any child created or deleted fires it),
   * or `null` when `path` does not exist (then nothing is watched). As with `watchData`,
   * `listener` is registered before asking; `unwatch` drops it.
   */
  async watchChildren(path: string, listener: ZkWatchListener): Promise<{ children: string[]; stat: ZkStat } | null> {
    return this.watchedRead(path, listener, 'getChildren', ([children, stat]) => ({
      children: children as string[],
      stat: toStat(stat as RawStat),
    }));
  }

  /**
   * `watchData` answering the node's data version (how many times its data was set), or
   * `null` when the node does not exist (then nothing is watched).
   */
  async watchDataVersion(path: string, listener: ZkWatchListener): Promise<number | null> {
    return this.watchedRead(path, listener, 'getData', ([, stat]) => (stat as { version: number }).version);
  }

  /**
   * `exists` with a one-shot watch, for a node that may not exist yet: `false` leaves a
   * creation watch (it fires when the node is made), `true` a data watch. Only where a
   * creation is awaited: on a node nobody makes, the server keeps the watch for the session.
   */
  async watchExists(path: string, listener: ZkWatchListener): Promise<boolean> {
    return (await this.watchedRead(path, listener, 'exists', ([stat]) => Boolean(stat))) ?? false;
  }

  /** A read with a one-shot watch: see `ZkWatchRegistry.read`. */
  private watchedRead<T>(
    path: string,
    listener: ZkWatchListener,
    op: 'getData' | 'getChildren' | 'exists',
    result: (reply: unknown[]) => T,
  ): Promise<T | null> {
    const send = (watcher: ZkWatcher): Promise<unknown[]> =>
      this.call<unknown[]>(op, path, (cb) =>
        op === 'getData'
          ? this.client.getData(path, watcher, cb as never)
          : op === 'exists'
            ? this.client.exists(path, watcher, cb as never)
            : this.client.getChildren(path, watcher, cb as never),
      );
    return this.watchers.read(path, listener, send, result);
  }

  unwatch(path: string, listener: ZkWatchListener): void {
    this.watchers.remove(path, listener);
  }

  /** Listeners waiting on watches, for tests asserting that nothing is left behind. */
  watcherCount(): number {
    return this.watchers.count();
  }

  /** Sends one request, tracked while in flight (see `sessionCall`). */
  private call<T extends unknown[]>(op: string, path: string, invoke: Invoke, write?: boolean): Promise<T> {
    return this.settling.hold(() => sessionCall<T>(this.callContext, op, path, invoke, write));
  }

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
    // grants nothing, and sends nothing but its own requests, until `settling` has had a write
    // on the connection answered, which is the re-attach's proof (see `QuorumEvidence`).
    const firstConnect = this.sessionIdHex === '';
    this.sessionIdHex = this.client.getSessionId().toString('hex');
    this.connected = true;
    this.serverCheck.connected();
    this.liveness.holdPairs(true);
    this.liveness.onConnected(this.attempt.startedAt, firstConnect);
    if (this.settling.pending) this.settling.run();
    else this.emit('connected');
    this.serverCheck.check();
  }

  /** Requests held back by `settling` go (or fail, if the session was lost). */
  private settled(): void {
    if (this.settling.finish() && this.connected && !this.isLost) this.emit('connected');
  }

  private onDisconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    this.liveness.onDisconnected();
    this.emit('disconnected');
  }

  private readonly livenessHooks: LivenessHooks = {
    heartbeat: () => {
      if (this.connected) this.settling.own(() => this.barrier()).catch(() => undefined);
    },
    anchor: () => {
      if (!this.connected) return;
      const ask = (cb: Parameters<Invoke>[0]): void => this.client.exists(HEARTBEAT_PATH, cb as never);
      this.call('heartbeat', HEARTBEAT_PATH, ask, false).catch(() => undefined);
    },
    // Held locks and leases listen for distrust. A waiting acquire needs no proof until
    // its grant, which waits for one when the proof is stale (`whenProven`).
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
    proven: () => this.emit('proven'),
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
    this.serverCheck.close();
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
}

/** A ZooKeeper error answered a write: it did not happen (a lost connection leaves that unknown). */
function refused(error: unknown): boolean {
  return error instanceof ZkOperationError && error.zkCode !== 'CONNECTION_LOSS';
}
