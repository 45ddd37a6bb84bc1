import { QuorumEvidence } from './quorum-evidence.js';

/**
 * What the client can know about its session's life, from its side alone.
 *
 * ZooKeeper's leader expires a session when it has heard nothing of it for the session
 * timeout `T`. The client cannot see the leader's clock, but `QuorumEvidence` gives it `P`,
 * the send time of a request proven to have reached the leader: the session is safe until
 * `P + T`, and holders that stop trusting their locks at `P + T - margin` stop before the
 * leader can expire the session and hand their locks to someone else. Answers a server
 * gives from its own copy (reads) do not move `P`: a server cut off from the leader gives
 * them for up to `syncLimit × tickTime`, long after the leader may have expired us.
 *
 * This class keeps `P` fresh with heartbeat writes while something relies on the session
 * (`busy`: a lock or lease held), leaves a server that answers nothing
 * (node-zookeeper-client has no read timeout) or takes too long over a write (it may be cut
 * off from the leader), and calls `atRisk` and then `gone` when `P` gets too old. `check()`
 * does the same at once, for callers that cannot wait for a timer (an event loop blocked
 * for seconds runs no timer, but must not then trust a lock).
 *
 * A session that holds nothing writes nothing, also while an acquire waits: it sends a
 * read instead (answered by its server alone, no transaction), which keeps the connection
 * checked and anchors the proof of the next write, and `P` is not watched (nothing to
 * protect). The first write of new work pairs with the latest such read, so `P` is fresh
 * as work starts; a grant after a long wait sends one write first (`stale`); a holder that
 * subscribes with a stale `P` anyway is told at once (`check` when it subscribes).
 */
export interface LivenessHooks {
  /** Sends a write that changes nothing; its answer comes back through `answered`. */
  heartbeat(): void;
  /** Sends a read that changes nothing (no transaction); its answer comes back through `answered`. */
  anchor(): void;
  /** Whether anything relies on the proof now: a lock or lease held (a waiting acquire does not, until its grant). */
  busy(): boolean;
  /** When the oldest request still unanswered (only writes: `writesOnly`) was made (queued, if disconnected), if any. */
  oldestPending(writesOnly: boolean): number | undefined;
  /** Leave this server: fail the requests sent before `sentBefore` (it may never answer them) and reconnect. */
  dropConnection(sentBefore: number): void;
  /** From now on the leader may expire the session within `margin`: stop trusting locks. */
  atRisk(unprovenForMs: number): void;
  /** After `atRisk`, a fresh proof: the session is safe again (for grants from now on). */
  recovered(): void;
  /** The proof moved (after `recovered`, if it brought trust back). */
  proven(): void;
  /** The leader may have expired the session by now. */
  gone(unprovenForMs: number): void;
}

export class SessionLiveness {
  private readonly evidence: QuorumEvidence;
  private lastWriteSentAt = -Infinity;
  private lastAnchorSentAt = -Infinity;
  private connected = false;
  /** When the connection in use came up: requests queued before it went out with it. */
  private connectedAt = -Infinity;
  private tick: NodeJS.Timeout | undefined;
  private tickPeriodMs = 0;
  /** The timeout negotiated when the proof last moved (proofs come from the connection in use). */
  private provenUnderMs: number | undefined;
  /** When a re-attach not yet proven was asked for: it touches the session no earlier. */
  private unprovenAttachAt = Infinity;
  private deadline: NodeJS.Timeout | undefined;
  /** The deadline timer is set (it is not re-armed while the session is idle). */
  private deadlineArmed = false;
  /** Idle when the clock was last looked at (`watchClock`), and since when it matters again, if it went idle. */
  private idle = false;
  private engagedAt: number | undefined;
  private phase: 'trusted' | 'at-risk' | 'gone' = 'trusted';
  private pairsHeld = false;
  /** Grants waiting for a fresh proof (`want`): the proof matters for them as for a held lock. */
  private wanted = 0;

  /** `startedAt`: when the first connect was sent (no later than the leader first heard of us). */
  constructor(
    private readonly timeoutMs: () => number,
    private readonly hooks: LivenessHooks,
    startedAt: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.evidence = new QuorumEvidence(startedAt, () => (this.pairsHeld ? Infinity : this.pairGapMs));
  }

  /** How far ahead of the leader's possible expiry holders stop trusting their locks. */
  get marginMs(): number {
    return Math.round(Math.min(this.provenUnderMs ?? Infinity, this.timeoutMs()) / 5);
  }

  /** Longest wait for any answer before the server is presumed dead (as ZooKeeper's Java client). */
  get readTimeoutMs(): number {
    return Math.round((this.timeoutMs() * 2) / 3);
  }

  /** The liveness tick's period: checks and heartbeats go at this pace. */
  private get tickMs(): number {
    return Math.max(1, Math.round(this.timeoutMs() / 30));
  }

  /** Longest wait for a write: past it the server is presumed cut off from the leader. */
  get writeTimeoutMs(): number {
    return Math.round(this.timeoutMs() / 10);
  }

  /** How often a write goes out when nothing else was written, answered or not (see the budget in docs/fencing.md). */
  get heartbeatMs(): number {
    return Math.round(this.timeoutMs() / 15);
  }

  /** Between two writes that prove a touch (`QuorumEvidence`): tickTime / 2 ≤ T / 4, plus slack. */
  get pairGapMs(): number {
    return Math.round((this.timeoutMs() * 3) / 10);
  }

  /** When the leader last proved to have heard from the session (see `QuorumEvidence`). */
  get provenAt(): number {
    return this.evidence.provenAt;
  }

  /** When locks stop being trusted, unless a new proof comes first. */
  get atRiskAt(): number {
    return this.goneAt - this.marginMs;
  }

  /**
   * A lock granted now could not be trusted, or not for long enough: once something is
   * held, the first heartbeat write goes out within a tick and is waited for up to the
   * write timeout before its server is left, and the proof must not run out before it can
   * come back. (A grant with less trust left than that would be told it is lost before
   * the heartbeat had a chance: a wait of about `0.4 T` would end in a lost lock.)
   */
  get stale(): boolean {
    return this.now() >= this.atRiskAt - this.tickMs - this.writeTimeoutMs;
  }

  /**
   * The earliest the leader may expire the session. Each connect may negotiate another
   * timeout, and a re-attach hands it to the leader as it touches the session (no earlier
   * than the attempt began); until a write on the new connection proves that happened,
   * the leader may still hold the proof under the timeout it was made with. So: the
   * sooner of the two, and the same as ever when the timeout did not change.
   */
  get goneAt(): number {
    const provenUnderMs = this.provenUnderMs ?? this.timeoutMs();
    return Math.min(this.evidence.provenAt + provenUnderMs, this.unprovenAttachAt + this.timeoutMs());
  }

  /**
   * When the session is given up (`gone`): when the leader may have expired it, but never
   * sooner than a whole timeout after the proof began to matter again. While idle, `P` is
   * not kept fresh and its age says nothing of the session: the server's answers and the
   * client's pings keep it alive, and the server reports an expired one itself. So work
   * that starts on a session idle for longer than `T` distrusts it at once (no lock is
   * trusted on an old proof) and its heartbeat writes get a whole timeout to prove it again.
   */
  private get givenUpAt(): number {
    return Math.max(this.goneAt, (this.engagedAt ?? -Infinity) + this.timeoutMs());
  }

  /**
   * A grant waits for a fresh proof (`stale`): until the returned function is called, the
   * session proves itself as while something is held (heartbeats are writes, and the clock
   * is watched: an old proof puts the session at risk now, and one not renewed within a
   * whole timeout from now gives it up). A blocked event loop leaves no read answered a pair
   * gap before the first write after it, so one write alone cannot prove the session again.
   */
  want(): () => void {
    this.wanted++;
    this.check();
    let done = false;
    return () => {
      if (!done) this.wanted--;
      done = true;
    };
  }

  /** A write went out at `sentAt`. */
  writeSent(sentAt: number): void {
    if (sentAt > this.lastWriteSentAt) this.lastWriteSentAt = sentAt;
  }

  /** A request sent at `sentAt` was answered (with a result or a ZooKeeper error). */
  answered(sentAt: number, write: boolean): void {
    if (!write) this.evidence.readAnswered(sentAt, this.now());
    else if (this.evidence.writeAnswered(sentAt, this.now())) this.proofMoved();
  }

  /**
   * Connected by an attempt started at `attemptStartedAt`: a new session proves that time
   * at once (without it, a first connect slower than the timeout would count as silence
   * from before the session existed); a re-attach, once a write on it is answered (see
   * `QuorumEvidence`). The heartbeat sent now is that write (a read while idle: the first
   * write of new work confirms the re-attach then).
   */
  onConnected(attemptStartedAt: number, newSession = false): void {
    this.connected = true;
    this.connectedAt = this.now();
    this.unprovenAttachAt = attemptStartedAt;
    this.provenUnderMs ??= this.timeoutMs(); // the first connect's start, proven at construction
    if (this.evidence.connected(attemptStartedAt, this.now(), newSession)) this.proofMoved();
    this.beat(this.now(), true); // the first of a pair, at once
    this.armTick();
    this.armDeadline();
  }

  onDisconnected(): void {
    this.connected = false;
  }

  /**
   * While held, no pair of writes proves anything (`QuorumEvidence`): until the server
   * connected now is known to relay touches as the pair gap assumes (not an observer, a
   * timeout of at least 2 × tickTime). Connects and re-attaches still prove their start.
   */
  holdPairs(held: boolean): void {
    this.pairsHeld = held;
  }

  /**
   * Whether locks can be trusted at this very moment; fires `atRisk`/`gone` now if due.
   * Before the first connect nothing is due: the connect itself proves the session.
   */
  check(): boolean {
    if (this.phase !== 'gone' && this.deadline) this.watchClock();
    return this.phase === 'trusted';
  }

  stop(): void {
    clearInterval(this.tick);
    clearTimeout(this.deadline);
    this.tick = this.deadline = undefined;
    this.deadlineArmed = false;
  }

  /**
   * Whether the proof matters now: while anything relies on the session or waits for it to
   * prove itself (`want`), and while at risk
   * (holders were told; it ends in a proof that brings trust back, or in the session given
   * up). Then heartbeats are writes and the clock is watched; otherwise reads anchor the next
   * write's proof, and nothing is due.
   */
  private engaged(): boolean {
    return this.phase === 'at-risk' || this.wanted > 0 || this.hooks.busy();
  }

  /** Sends the heartbeat: a write or a read (see `engaged`), when due or at once. */
  private beat(now: number, atOnce = false): void {
    const writes = this.engaged();
    const last = writes ? this.lastWriteSentAt : Math.max(this.lastWriteSentAt, this.lastAnchorSentAt);
    if (!atOnce && now - last < this.heartbeatMs) return;
    if (writes) return this.hooks.heartbeat();
    this.lastAnchorSentAt = now;
    this.hooks.anchor();
  }

  /**
   * Checks the clock while the proof matters (`engaged`): idle, nothing is held that it
   * protects, and nothing is due (the server's own answers keep the connection checked,
   * and it reports an expired session on the next contact).
   */
  private watchClock(): void {
    if (!this.engaged()) {
      this.idle = true;
      return;
    }
    // The proof matters again from now on: if it aged while idle past what new work can rely
    // on (`stale`), its heartbeats get a whole timeout from now (`givenUpAt`); a fresh one
    // keeps its own deadlines. (Judged by the risk alone, a proof just short of it would be
    // given up at its own `goneAt`, before a pair of writes a pair gap apart could renew it.)
    if (this.idle) this.engagedAt = this.stale ? this.now() : undefined;
    this.idle = false;
    this.evaluate();
    if (!this.deadlineArmed && this.phase !== 'gone') this.armDeadline();
  }

  private proofMoved(): void {
    this.provenUnderMs = this.timeoutMs();
    this.unprovenAttachAt = Infinity; // proven on this connection: its timeout applies from the proof on
    // Only a proof sent before the risk began brings trust back for new grants.
    const fresh = this.now() < this.atRiskAt;
    // Proven again: the usual deadlines from this proof on. Not for a proof still too old
    // (`stale`: it paired with a read from before a blocked event loop): its own deadline may
    // be too near for the next pair of writes, and the whole timeout given from when the proof
    // began to matter again still runs.
    if (!this.stale) this.engagedAt = undefined;
    if (this.phase === 'at-risk' && fresh) {
      this.phase = 'trusted';
      this.hooks.recovered();
      this.armDeadline(); // the timer was set for `goneAt`, later than the new at-risk time
    }
    this.hooks.proven();
  }

  private onTick(): void {
    // First the clock: after a blocked event loop this tick may run before the deadline
    // timer, and failing requests below resumes code that awaits them.
    this.watchClock();
    if (this.phase === 'gone' || !this.connected) return;
    const now = this.now();
    const oldest = this.oldestPending(false);
    if (oldest !== undefined && now - oldest > this.readTimeoutMs) return this.leave(now - this.readTimeoutMs);
    // Idle, `P` is not kept fresh: a slow write then is only slow.
    if (this.engaged() && this.stuckOnWrite(now)) return this.leave(now);
    // Pipelined: a slow commit must not slow the heartbeats (nor, with them, the proof).
    this.beat(now);
  }

  /**
   * A write unanswered past the write timeout, while the proof has aged past its usual lag
   * (pair gap plus two heartbeats: half the timeout): this server may be cut off from the
   * leader, so leave it while there is time to re-attach elsewhere (which proves the session
   * at once). Only slow commits, with the proof still young, are waited out: leaving then
   * would fail the requests in flight again and again.
   */
  private stuckOnWrite(now: number): boolean {
    const oldestWrite = this.oldestPending(true);
    return (
      oldestWrite !== undefined &&
      now - oldestWrite > this.writeTimeoutMs &&
      now - this.evidence.provenAt > this.timeoutMs() / 2
    );
  }

  /**
   * Since when the server connected now has had the oldest request unanswered: the client
   * queues requests made while disconnected and sends them as it connects. Timed from when
   * they were made, a delete queued by a holder told at risk would look stuck at the first
   * tick on the new server, and the session would leave it before the write proving the
   * re-attach came back.
   */
  private oldestPending(writesOnly: boolean): number | undefined {
    const oldest = this.hooks.oldestPending(writesOnly);
    return oldest === undefined ? undefined : Math.max(oldest, this.connectedAt);
  }

  private leave(sentBefore: number): void {
    this.connected = false;
    this.hooks.dropConnection(sentBefore);
  }

  /**
   * Every connect may negotiate another timeout (another server, another maxSessionTimeout):
   * the heartbeats and the checks must keep the pace of the timeout in force, or a session
   * moved from 80 s to 4 s would send its heartbeats 20 times too rarely and lose its locks.
   */
  private armTick(): void {
    const periodMs = this.tickMs;
    if (this.tick && periodMs === this.tickPeriodMs) return;
    clearInterval(this.tick);
    this.tickPeriodMs = periodMs;
    this.tick = setInterval(() => this.onTick(), periodMs);
  }

  /**
   * One timer, re-armed lazily: when it fires it first checks whether the proof moved on.
   * Idle, it is not re-armed (`watchClock` arms it again when work starts).
   */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    const at = this.phase === 'trusted' ? this.atRiskAt : this.givenUpAt;
    this.deadlineArmed = true;
    this.deadline = setTimeout(() => this.onDeadline(), Math.max(0, at - this.now()));
  }

  private onDeadline(): void {
    this.deadlineArmed = false;
    this.watchClock();
  }

  private evaluate(): void {
    const now = this.now();
    const unproven = Math.round(now - this.evidence.provenAt);
    if (this.phase === 'trusted' && now >= this.atRiskAt) {
      this.phase = 'at-risk';
      this.hooks.atRisk(unproven);
    }
    if (this.phase === 'at-risk' && now >= this.givenUpAt) {
      this.phase = 'gone';
      this.stop();
      this.hooks.gone(unproven);
    }
  }
}
