/** Anchors kept: one per 1/16 of the gap, so three gaps' worth. */
const MAX_ANCHORS = 48;

/**
 * What the client can prove about the latest time ZooKeeper's *leader* heard from its
 * session, from answers alone. Only the leader expires sessions, and a server that is
 * cut off from the leader goes on answering reads from its own copy of the data for up
 * to `syncLimit × tickTime`; so answered reads prove nothing, only requests the leader
 * must take part in do:
 *
 * - **A connect.** Creating a session is a transaction the leader commits with a quorum:
 *   it heard from us no earlier than when the attempt started. Re-attaching one is checked
 *   by the leader too, which touches the session; but a leader cut off from the others
 *   answers it as well until it notices, and its touch counts for nothing at the leader
 *   elected meanwhile. So a re-attach proves its attempt's start only once a write sent on
 *   the new connection is answered: that write was committed by a leader with a quorum.
 * - **A request, then a write `gap` later.** A write is committed through the leader, but a
 *   follower tells the leader about its clients' activity only in its replies to the
 *   leader's pings, sent every `tickTime / 2`. So the answer to request `k` alone proves
 *   nothing about the session's clock at the leader. But the server touches the session
 *   for every request it receives, reads included (`ZooKeeperServer.submitRequestNow`),
 *   and once `k` is answered, the leader's next ping reaches the follower within
 *   `tickTime / 2`; the follower's reply carries the touch of `k` and goes out on the
 *   follower→leader link before any request the follower forwards later (TCP keeps the
 *   order). A write `j` sent at least `gap` after `k` was answered, and answered too,
 *   reached the leader behind that reply: the leader touched the session after `k` was
 *   sent, so it keeps it at least until `sentAt(k) + timeout`. So `k`, the *anchor*, may
 *   be a read (no transaction); `j` must be a write: only a leader with a quorum commits
 *   it, where a cut-off server answers reads, and even `sync`, alone.
 *
 * ZooKeeper grants session timeouts of at least 2 × tickTime by default, so
 * `tickTime / 2 ≤ timeout / 4`, and `gap` is that plus slack for the ping's delivery and
 * scheduling. The session leaves a server that says otherwise (`conf`), and observers
 * (`srvr`): behind an observer master their clients' touches wait for one more ping.
 */
export class QuorumEvidence {
  /** Send time of the latest request proven to have touched the session at the leader. */
  private proven: number;
  /** Answered requests not yet usable as the first of a pair, oldest first. */
  private anchors: { sentAt: number; answeredAt: number }[] = [];
  /** A re-attach waiting for its first answered write: when it started, and when it was answered. */
  private reattach: { startedAt: number; connectedAt: number } | undefined;

  constructor(
    provenAt: number,
    /** The pair gap; `Infinity` while no pair may prove anything. */
    private readonly gapMs: () => number,
  ) {
    this.proven = provenAt;
  }

  get provenAt(): number {
    return this.proven;
  }

  /**
   * A connection attempt started at `attemptStartedAt` was answered. Writes answered on
   * an earlier connection may have gone through another server: they pair no more.
   */
  connected(attemptStartedAt: number, connectedAt: number, newSession: boolean): boolean {
    this.anchors = [];
    if (newSession) return this.prove(attemptStartedAt);
    this.reattach = { startedAt: attemptStartedAt, connectedAt };
    return false;
  }

  /** A write sent at `sentAt` was answered at `answeredAt`. Returns whether the proof moved. */
  writeAnswered(sentAt: number, answeredAt: number): boolean {
    // Answered since the re-attach, so on the new connection (the old one is closed).
    const confirmed =
      this.reattach !== undefined && answeredAt >= this.reattach.connectedAt && this.prove(this.reattach.startedAt);
    if (confirmed) this.reattach = undefined;
    return this.pair(sentAt, answeredAt) || confirmed;
  }

  /**
   * A read sent at `sentAt` was answered at `answeredAt`: the server touched the session
   * on receipt, so a write sent a pair gap later can prove it; the read itself proves nothing.
   */
  readAnswered(sentAt: number, answeredAt: number): void {
    this.keepAnchor(sentAt, answeredAt);
  }

  private pair(sentAt: number, answeredAt: number): boolean {
    const gap = this.gapMs();
    let anchor = -1;
    for (let i = 0; i < this.anchors.length && this.anchors[i].answeredAt + gap <= sentAt; i++) anchor = i;
    const moved = anchor >= 0 && this.prove(this.anchors[anchor].sentAt);
    // Older anchors can never prove more than the one just used.
    if (anchor > 0) this.anchors.splice(0, anchor);
    this.keepAnchor(sentAt, answeredAt);
    return moved;
  }

  private keepAnchor(sentAt: number, answeredAt: number): void {
    // A busy client answers thousands of requests a second: one anchor per 1/16 of the gap
    // is enough (it costs at most that much freshness) and keeps the list short.
    const last = this.anchors.at(-1);
    if (last && answeredAt - last.answeredAt < this.gapMs() / 16) return;
    this.anchors.push({ sentAt, answeredAt });
    // An idle client answers reads and no write for hours: bound the list. Only a write
    // still in flight for several gaps could have used the dropped one (a smaller proof, never a wrong one).
    if (this.anchors.length > MAX_ANCHORS) this.anchors.shift();
  }

  private prove(sentAt: number): boolean {
    if (sentAt <= this.proven) return false;
    this.proven = sentAt;
    return true;
  }
}
