import { InvalidOptionError } from '../errors/errors.js';
import { groupMessages } from '../errors/messages.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { encodeGroupName } from '../naming/group-name.js';
import { resolveMemberData, type GroupEntry, type GroupMember, type MemberData } from '../port/group.js';
import type { LockBackend } from '../port/lock-backend.js';
import { MAX_TIMER_MS } from '../util/long-timeout.js';
import { followChanges } from './watched-read.js';

/** Options of a `GroupMembership`. */
export interface GroupMembershipOptions {
  /**
   * This instance's id in the group, needed to `join()`: a static id (like Kafka's
   * `group.instance.id`), so that a restarted instance is the same member. An instance
   * joining with an id already there takes it over (see `LockBackend.joinGroup`).
   */
  readonly memberId?: string;
  /** What this member tells the others (a plain JSON object, up to 1 KiB as JSON). Default `{}`. */
  readonly data?: MemberData;
  /** How long to wait before reading again after a failed read, in ms. Default 1000. */
  readonly retryDelayMs?: number;
}

const OPTION_KEYS: readonly string[] = ['memberId', 'data', 'retryDelayMs'];

/** What a membership listener is told: the members now, and what changed since the last change told. */
export interface MembershipChange {
  readonly group: string;
  /** Every member now, in id order. */
  readonly members: readonly GroupMember[];
  /** Ids that were not members before. */
  readonly joined: readonly GroupMember[];
  /** Ids that are members no more (as they were last seen). */
  readonly left: readonly GroupMember[];
  /** Ids whose entry was made again (a later `since`): restarted and took its id back, or back after a lost session. */
  readonly rejoined: readonly GroupMember[];
}

export type MembershipListener = (change: MembershipChange) => void;

/**
 * Group membership over any `LockBackend`: each live instance is a member with an id and
 * JSON data (ZooKeeper: an ephemeral node, gone with its session), and every instance that
 * watches the group is told each change.
 *
 * ```ts
 * const membership = new GroupMembership(backend, 'workers', { memberId: 'worker-1', data: { zone: 'eu-1' } });
 * membership.onChange(({ members }) => console.log(members.map((m) => m.id)));
 * await membership.join();
 * // … membership.members()
 * await membership.leave();
 * ```
 *
 * `members()` is what the last read saw. While the backend is disconnected it stays as it
 * was (nobody's entry can be seen to go meanwhile); the change is told once it is read again.
 */
export class GroupMembership {
  private readonly memberId: string | undefined;
  private readonly json: MemberData;
  private readonly retryDelayMs: number;
  private readonly listeners = new Set<MembershipListener>();
  private seen: readonly GroupMember[] = [];
  private entry: GroupEntry | undefined;
  private following: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;
  private firstRead: Promise<void> | undefined;

  /** Throws `InvalidGroupError` or `InvalidOptionError` before anything is sent. */
  constructor(
    private readonly backend: LockBackend,
    readonly group: string,
    options?: GroupMembershipOptions,
  ) {
    encodeGroupName('group', group);
    if (options !== undefined && (typeof options !== 'object' || options === null))
      throw new InvalidOptionError('options', options, 'an object such as { memberId: "worker-1" }');
    assertKnownOptions(options ?? {}, OPTION_KEYS, 'GroupMembership');
    const { memberId, data = {}, retryDelayMs = 1000 } = options ?? {};
    if (memberId !== undefined) encodeGroupName('memberId', memberId);
    resolveMemberData(data);
    if (typeof retryDelayMs !== 'number' || !(retryDelayMs >= 0 && retryDelayMs <= MAX_TIMER_MS))
      throw new InvalidOptionError('retryDelayMs', retryDelayMs, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`);
    this.memberId = memberId;
    this.json = data;
    this.retryDelayMs = retryDelayMs;
  }

  /**
   * Joins the group as `memberId` (idempotent) and watches it; resolves once the entry is
   * made and the members read (this one among them). Rejects with `InvalidOptionError`
   * without a `memberId`, `LockUnavailableError` when the backend cannot be reached.
   */
  async join(): Promise<void> {
    if (this.memberId === undefined)
      throw new InvalidOptionError('memberId', undefined, groupMessages.notJoined(this.group));
    this.entry ??= await this.backend.joinGroup(this.group, this.memberId, this.json);
    await this.watch();
  }

  /** Watches the group without joining it (idempotent); resolves once the members were read. */
  watch(): Promise<void> {
    if (!this.following) {
      const stop = new AbortController();
      let read!: () => void;
      this.firstRead = new Promise((resolve) => (read = resolve));
      const done = followChanges({
        backend: this.backend,
        targets: [{ group: this.group }],
        read: () => this.backend.groupMembers(this.group, { timeoutMs: Infinity }),
        onRead: (members) => {
          this.update(members);
          read();
        },
        stop: stop.signal,
        retryDelayMs: this.retryDelayMs,
      }).finally(read);
      this.following = { stop, done };
    }
    return this.firstRead!;
  }

  /** The members as last read, in id order; empty before `join()` or `watch()` resolved. */
  members(): readonly GroupMember[] {
    return this.seen;
  }

  /** Whether this instance is a member now: joined, not left, not replaced by another instance with its id. */
  get isMember(): boolean {
    return this.entry !== undefined && !this.entry.signal.aborted;
  }

  /** This member's entry's signal: aborts with `MemberReplacedError` when another instance took its id. `undefined` before `join()`. */
  get signal(): AbortSignal | undefined {
    return this.entry?.signal;
  }

  /**
   * Calls `listener` at every change of the members seen, in order; returns the unsubscribe.
   * A listener that throws is reported as a process warning.
   */
  onChange(listener: MembershipListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Leaves the group (its entry deleted) and stops watching it; idempotent. `join()` may be called again. */
  async leave(): Promise<void> {
    const { entry, following } = this;
    this.entry = undefined;
    this.following = undefined;
    following?.stop.abort();
    await Promise.all([entry?.leave(), following?.done]);
  }

  private update(members: readonly GroupMember[]): void {
    const before = new Map(this.seen.map((member) => [member.id, member]));
    const now = new Map(members.map((member) => [member.id, member]));
    const joined = members.filter((member) => !before.has(member.id));
    const left = this.seen.filter((member) => !now.has(member.id));
    const rejoined = members.filter((member) => {
      const was = before.get(member.id);
      return (
        was !== undefined && (was.since.getTime() !== member.since.getTime() || was.sessionId !== member.sessionId)
      );
    });
    this.seen = members;
    if (joined.length + left.length + rejoined.length === 0) return;
    const change: MembershipChange = { group: this.group, members, joined, left, rejoined };
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        process.emitWarning(groupMessages.listenerThrew(this.group, error), { code: 'NESTJS_ZK_LOCK_LISTENER' });
      }
    }
  }
}
