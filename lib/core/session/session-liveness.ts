/**
 * What the client can know about its session's life, from its side alone.
 *
 * ZooKeeper expires a session when it has heard nothing from the client for the session
 * timeout. The client cannot see when the server last heard from it, but it knows when it
 * sent each request the server answered: the server heard from it no earlier than that.
 * So from `S`, the send time of the last answered request, the session is safe until
 * `S + timeout`, and a holder that stops trusting its locks at `S + timeout - margin`
 * stops before the server can expire the session and hand its locks to someone else.
 *
 * This class keeps `S` fresh with heartbeats while connected, detects a server gone
 * silent (node-zookeeper-client has no read timeout: in a partition with no FIN or RST it
 * stays "connected" forever) and calls `atRisk` and then `gone` when `S` gets too old.
 */
export interface LivenessHooks {
  /** Sends a cheap request; its answer comes back through `acked`. */
  heartbeat(): void;
  /** The send time of the oldest request still unanswered, if any. */
  oldestPending(): number | undefined;
  /**
   * The server has not answered for the read timeout: fail the requests sent before
   * `sentBefore` (the client may never call them back) and reconnect.
   */
  dropConnection(sentBefore: number): void;
  /** From now on the server may expire the session within `margin`: stop trusting locks. */
  atRisk(silentForMs: number): void;
  /** After `atRisk`, an answer to a request sent recently enough: the session is safe again. */
  recovered(): void;
  /** The server may have expired the session by now. */
  gone(silentForMs: number): void;
}

export class SessionLiveness {
  private lastAckSentAt: number;
  private connected = false;
  private tick: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private phase: 'trusted' | 'at-risk' | 'gone' = 'trusted';

  /** `startedAt`: when the first connect was sent (no later than the server first heard of us). */
  constructor(
    private readonly timeoutMs: () => number,
    private readonly hooks: LivenessHooks,
    startedAt: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastAckSentAt = startedAt;
  }

  /** How far ahead of the server's possible expiry holders stop trusting their locks. */
  get marginMs(): number {
    return Math.round(this.timeoutMs() / 5);
  }

  /** Longest wait for an answer before the connection is presumed dead (as ZooKeeper's Java client). */
  get readTimeoutMs(): number {
    return Math.round((this.timeoutMs() * 2) / 3);
  }

  /** When locks stop being trusted, unless an answer comes first. */
  get atRiskAt(): number {
    return this.lastAckSentAt + this.timeoutMs() - this.marginMs;
  }

  get goneAt(): number {
    return this.lastAckSentAt + this.timeoutMs();
  }

  /** A request sent at `sentAt` was answered (with a result or a ZooKeeper error). */
  acked(sentAt: number): void {
    if (sentAt <= this.lastAckSentAt) return;
    this.lastAckSentAt = sentAt;
    // Heard again on the same session, by a request recent enough to push the risk ahead.
    if (this.phase === 'at-risk' && this.now() < this.atRiskAt) {
      this.phase = 'trusted';
      this.hooks.recovered();
    }
  }

  /**
   * Connected (or reconnected) by an attempt started at `attemptStartedAt`: the server
   * created or touched the session on a request sent after that, so it counts as an
   * answer sent then. Without it, a first connect slower than the timeout would be
   * counted as silence from before the session even existed.
   */
  onConnected(attemptStartedAt: number): void {
    this.acked(attemptStartedAt);
    this.connected = true;
    this.hooks.heartbeat(); // proves the session lives, and refreshes S at once
    this.tick ??= setInterval(() => this.onTick(), Math.max(1, Math.round(this.timeoutMs() / 6)));
    this.armDeadline();
  }

  onDisconnected(): void {
    this.connected = false;
  }

  stop(): void {
    clearInterval(this.tick);
    clearTimeout(this.deadline);
    this.tick = this.deadline = undefined;
  }

  private onTick(): void {
    if (!this.connected) return;
    const now = this.now();
    const oldest = this.hooks.oldestPending();
    if (oldest !== undefined && now - oldest > this.readTimeoutMs) {
      this.connected = false;
      this.hooks.dropConnection(now - this.readTimeoutMs);
      return;
    }
    if (oldest === undefined && now - this.lastAckSentAt >= this.timeoutMs() / 6) this.hooks.heartbeat();
  }

  /** One timer, re-armed lazily: when it fires it first checks whether `S` moved on. */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    const at = this.phase === 'trusted' ? this.atRiskAt : this.goneAt;
    this.deadline = setTimeout(() => this.onDeadline(), Math.max(0, at - this.now()));
  }

  private onDeadline(): void {
    const now = this.now();
    const silentFor = Math.round(now - this.lastAckSentAt);
    if (this.phase === 'trusted' && now >= this.atRiskAt) {
      this.phase = 'at-risk';
      this.hooks.atRisk(silentFor);
    } else if (this.phase === 'at-risk' && now >= this.goneAt) {
      this.phase = 'gone';
      this.stop();
      this.hooks.gone(silentFor);
      return;
    }
    this.armDeadline();
  }
}
