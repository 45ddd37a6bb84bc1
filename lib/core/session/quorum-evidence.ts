/**
 * What the client can prove about the latest time ZooKeeper's *leader* heard from its
 * session, from answers alone. Only the leader expires sessions, and a server that is
 * cut off from the leader goes on answering reads from its own copy of the data for up
 * to `syncLimit × tickTime`; so answered reads prove nothing, only requests the leader
 * must take part in do:
 *
 * - **A connect.** Creating a session, or re-attaching one on any server, is checked by
 *   the leader, which touches the session when it does: it heard from us no earlier than
 *   when the attempt started.
 * - **Two writes, `gap` apart.** A write is committed through the leader, but a follower
 *   tells the leader about its clients' activity only in its replies to the leader's
 *   pings, sent every `tickTime / 2`. So the answer to write `k` alone proves nothing
 *   about the session's clock at the leader. But once `k` is answered, the leader's next
 *   ping reaches the follower within `tickTime / 2`; the follower's reply carries the
 *   touch of `k` and goes out on the follower→leader link before any request the follower
 *   forwards later (TCP keeps the order). A write `j` sent at least `gap` after `k` was
 *   answered, and answered too, reached the leader behind that reply: the leader touched
 *   the session after `k` was sent, so it keeps it at least until `sentAt(k) + timeout`.
 *
 * The client cannot learn `tickTime`; ZooKeeper grants session timeouts of at least
 * 2 × tickTime by default, so `tickTime / 2 ≤ timeout / 4`, and `gap` is that plus slack for
 * the ping's delivery and scheduling.
 */
export class QuorumEvidence {
  /** Send time of the latest request proven to have touched the session at the leader. */
  private proven: number;
  /** Answered writes not yet usable as the first of a pair, oldest first. */
  private anchors: { sentAt: number; answeredAt: number }[] = [];

  constructor(
    provenAt: number,
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
  connected(attemptStartedAt: number): boolean {
    this.anchors = [];
    return this.prove(attemptStartedAt);
  }

  /** A write sent at `sentAt` was answered at `answeredAt`. Returns whether the proof moved. */
  writeAnswered(sentAt: number, answeredAt: number): boolean {
    const gap = this.gapMs();
    let anchor = -1;
    for (let i = 0; i < this.anchors.length && this.anchors[i].answeredAt + gap <= sentAt; i++) anchor = i;
    const moved = anchor >= 0 && this.prove(this.anchors[anchor].sentAt);
    // Older anchors can never prove more than the one just used.
    if (anchor > 0) this.anchors.splice(0, anchor);
    // A busy client answers thousands of writes a second: one anchor per 1/16 of the gap
    // is enough (it costs at most that much freshness) and keeps the list short.
    const last = this.anchors.at(-1);
    if (!last || answeredAt - last.answeredAt >= gap / 16) this.anchors.push({ sentAt, answeredAt });
    return moved;
  }

  private prove(sentAt: number): boolean {
    if (sentAt <= this.proven) return false;
    this.proven = sentAt;
    return true;
  }
}
