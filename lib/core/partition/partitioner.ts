import { InvalidOptionError, LockLostError } from '../errors/errors.js';
import { partitionMessages } from '../errors/messages.js';
import { GroupMembership } from '../membership/group-membership.js';
import { followChanges } from '../membership/watched-read.js';
import { encodeGroupName } from '../naming/group-name.js';
import type { GroupMember } from '../port/group.js';
import { listedParts, type PartRecord } from './part-owners.js';
import { heldNode, type ListedLock, type LockBackend, type LockHandle } from '../port/lock-backend.js';
import { writeWhileHolding } from '../util/write-while-holding.js';
import { longTimeout, type LongTimeout } from '../util/long-timeout.js';
import { PendingWork } from '../util/pending-work.js';
import { OwnedPart, type PartitionHandle } from './owned-part.js';
import { assignParts } from './part-assignment.js';
import {
  resolvePartitionerOptions,
  type PartOf,
  type PartitionerOptions,
  type Partitions,
  type ResolvedPartitionerOptions,
} from './partitioner-options.js';

/** What a partition listener is told at each change of what this member owns. */
export interface PartitionChange<P extends number | string = number | string> {
  readonly group: string;
  /** Parts whose lock this member was just granted: owned from now on. */
  readonly assigned: readonly P[];
  /** Parts this member gives up: owned no more, their locks released once `onRevoked` drained them. */
  readonly revoked: readonly P[];
  /** Parts whose lock was lost (told before any other member can be granted it). */
  readonly lost: readonly P[];
  /** Every part owned now, sorted. */
  readonly owned: readonly P[];
}

export type PartitionListener<P extends number | string = number | string> = (change: PartitionChange<P>) => void;

/** How long to wait before queueing for a part again after a failed acquire, in ms. */
const RETRY_DELAY_MS = 1000;

/** Backends that are a member of a group through a started partitioner: one member per backend and group. */
const members = new WeakMap<LockBackend, Set<string>>();

/** Where one part stands in this member. */
type Slot =
  | { readonly state: 'idle' }
  | { readonly state: 'acquiring'; readonly abort: AbortController }
  | { readonly state: 'retrying'; readonly timer: LongTimeout }
  | { readonly state: 'held' | 'revoking'; readonly owned: OwnedPart };

type Owning = Extract<Slot, { owned: OwnedPart }>;

const IDLE: Slot = { state: 'idle' };

/** One run, from `start()` to `stop()`. */
interface Run {
  readonly halt: AbortController;
  readonly started: Promise<void>;
  readonly unsubscribe: () => void;
  following?: Promise<void>;
  settle?: LongTimeout;
}

/**
 * Shares the parts of a group (a count of parts, or a list of keys: tenants, queues, key
 * ranges) among the live members of the group, each part owned by one member at a time,
 * over any `LockBackend`:
 *
 * - **Ownership is a lock per part** (`partition:<group>/<part>`), so two members never
 *   own a part at once and every ownership has a fencing token that rises with each new
 *   owner. Listeners hear `assigned` once the lock is held, `revoked` before it is
 *   released, and `lost` as soon as it is lost, before any other member can be granted it.
 * - **Balanced and sticky**: owned counts differ by at most 1, a join moves only what the
 *   newcomer takes, a leave or crash only the leaver's parts (see `assignParts`). Every
 *   member computes the assignment from what it reads, the members and each part lock's
 *   holder, so members agree without a coordinator and nothing is written at idle.
 * - A member queues on a part's lock while its old owner still holds it, and stops
 *   queueing when the assignment changes again. A brief disconnect releases nothing.
 *
 * ```ts
 * const partitioner = new Partitioner(backend, 'orders', { partitions: 64, memberId: 'worker-1' });
 * partitioner.onChange(({ owned }) => console.log('owning', owned));
 * await partitioner.start();
 * // … for (const part of partitioner.owned()) await work(part, partitioner.handle(part)!);
 * await partitioner.stop();
 * ```
 */
export class Partitioner<T extends Partitions = Partitions> {
  /** This member's id in the group. */
  readonly memberId: string;
  private readonly options: ResolvedPartitionerOptions;
  private readonly membership: GroupMembership;
  private readonly slots = new Map<string, Slot>();
  private readonly listeners = new Set<PartitionListener<PartOf<T>>>();
  /** Acquires and revocations under way: `stop()` waits for them. */
  private readonly pending = new PendingWork();
  /** The members the assignment counts: those read once `settleMs` passed with no change. */
  private view: readonly string[] = [];
  /** Each part's owner as last read (member ids). */
  private listed = new Map<string, string>();
  private run: Run | undefined;
  private stopping: Promise<void> | undefined;
  private reconciling = false;
  /** Changes not told yet: one made while the listeners hear another waits for its turn. */
  private readonly untold: Array<PartitionChange<PartOf<T>>> = [];
  private telling = false;

  /** Throws `InvalidGroupError` or `InvalidOptionError` before anything is sent. */
  constructor(
    private readonly backend: LockBackend,
    readonly group: string,
    options: PartitionerOptions<T>,
  ) {
    this.options = resolvePartitionerOptions(group, options);
    const identity = backend?.identity;
    if (typeof identity !== 'string') throw new InvalidOptionError('backend', backend, partitionMessages.noIdentity);
    this.memberId = this.options.memberId ?? defaultMemberId(identity);
    this.membership = new GroupMembership(backend, group, { memberId: this.memberId, data: { identity } });
    for (const key of this.options.parts.keys) this.slots.set(key, IDLE);
  }

  /**
   * Joins the group (idempotent) and starts owning parts: resolves once this member is in
   * the group and has read the parts' owners, when it starts queueing for its share
   * (`onChange` tells each part as its lock is granted). Rejects with `InvalidOptionError`
   * when this backend is a member of the group through another started `Partitioner`,
   * `LockUnavailableError` when the backend cannot be reached.
   */
  start(): Promise<void> {
    if (this.run) return this.run.started;
    const joined = members.get(this.backend) ?? new Set<string>();
    if (joined.has(this.group))
      return Promise.reject(
        new InvalidOptionError('backend', this.backend, partitionMessages.alreadyStarted(this.group)),
      );
    members.set(this.backend, joined.add(this.group));
    const halt = new AbortController();
    const unsubscribe = this.membership.onChange(() => this.membersChanged());
    const run: Run = { halt, unsubscribe, started: this.begin(halt.signal) };
    this.run = run;
    run.started.catch(() => {
      if (this.run === run) void this.stop();
    });
    return run.started;
  }

  private async begin(halt: AbortSignal): Promise<void> {
    await this.membership.join();
    // Another instance took this member's id: it is that instance's part now.
    this.membership.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.view = this.membership.members().map(({ id }) => id);
    let read!: () => void;
    const firstRead = new Promise<void>((resolve) => (read = resolve));
    const { parts } = this.options;
    this.run!.following = followChanges({
      backend: this.backend,
      targets: parts.keys.map((key) => ({ lock: parts.lockOf(key) })),
      read: () => this.backend.locks(parts.prefix, { timeoutMs: Infinity }),
      onRead: (listing) => {
        this.listed = this.ownersIn(listing);
        this.reconcile();
        read();
      },
      stop: halt,
      retryDelayMs: RETRY_DELAY_MS,
    }).finally(read);
    await firstRead;
  }

  /**
   * Stops owning parts (idempotent): stops queueing, leaves the group (so the others can
   * take this member's parts at once), tells listeners `revoked` for every part owned,
   * lets `onRevoked` drain them (up to `revokeGraceMs`), then releases their locks, so
   * each successor is granted its part at once. `start()` may join again afterwards.
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.halt().finally(() => (this.stopping = undefined)));
  }

  private async halt(): Promise<void> {
    const run = this.run;
    if (!run) return;
    run.halt.abort(); // no acquire starts from now on, and those waiting are cancelled
    run.unsubscribe();
    run.settle?.clear();
    await run.started.catch(() => undefined);
    for (const [key, slot] of this.slots) {
      if (slot.state !== 'retrying') continue;
      slot.timer.clear();
      this.slots.set(key, IDLE);
    }
    // Left first: the others count this member out, and queue for its parts while it drains them.
    await this.membership.leave().catch(() => undefined);
    const held = [...this.slots].filter(([, slot]) => slot.state === 'held').map(([key]) => key);
    if (held.length > 0) void this.pending.track(this.revoke(held));
    await this.pending.drain();
    await run.following;
    this.run = undefined;
    members.get(this.backend)?.delete(this.group);
  }

  /** The parts this member owns now, sorted (numerically for a count). Not those being revoked. */
  owned(): Array<PartOf<T>> {
    const keys = [...this.slots].filter(([, slot]) => slot.state === 'held').map(([key]) => key);
    return this.valuesOf(keys);
  }

  /**
   * The ownership of `part`: its lock's `fencingToken`, a `signal` that aborts when it ends,
   * `assertHeld()`. From when `assigned` is told until the lock is released (also while a
   * revocation drains it); `undefined` otherwise. Throws `InvalidOptionError` for a part
   * that is not one of the group's.
   */
  handle(part: PartOf<T>): PartitionHandle<PartOf<T>> | undefined {
    const key = String(part);
    const slot = this.slots.get(key);
    if (!slot || this.options.parts.valueOf(key) !== part)
      throw new InvalidOptionError('part', part, partitionMessages.unknownPart(this.group, part));
    return slot.state === 'held' || slot.state === 'revoking'
      ? (slot.owned.view as PartitionHandle<PartOf<T>>)
      : undefined;
  }

  /** The members of the group as last read, in id order (their data holds `identity`: the backend's). */
  members(): readonly GroupMember[] {
    return this.membership.members();
  }

  /**
   * Calls `listener` at every change of what this member owns, synchronously, in order:
   * `lost` as the lock's signal aborts. Returns the unsubscribe function. A listener that
   * throws is reported as a process warning.
   */
  onChange(listener: PartitionListener<PartOf<T>>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A membership change: counted once the members stayed the same for `settleMs`. */
  private membersChanged(): void {
    const run = this.run;
    if (!run || run.halt.signal.aborted) return;
    run.settle?.clear();
    const settled = (): void => {
      run.settle = undefined;
      this.view = this.membership.members().map(({ id }) => id);
      this.reconcile();
    };
    if (this.options.settleMs === 0) settled();
    else run.settle = longTimeout(settled, this.options.settleMs);
  }

  /** Each part's owner in `listing`: the member whose backend holds its lock. */
  private ownersIn(listing: readonly ListedLock[]): Map<string, string> {
    const owners = new Map<string, string>();
    for (const { key, owner } of listedParts(listing, this.options.parts.prefix, this.membership.members()))
      if (owner && this.slots.has(key)) owners.set(key, owner.id);
    return owners;
  }

  /** The owners to assign from: as last read, but what this member holds, it knows better. */
  private currentOwners(): Map<string, string> {
    const owners = new Map(this.listed);
    for (const [key, slot] of this.slots) {
      if (slot.state === 'held' || slot.state === 'revoking') owners.set(key, this.memberId);
      else if (owners.get(key) === this.memberId) owners.delete(key);
    }
    return owners;
  }

  /** Queues for the parts assigned to this member, and gives up those that are not. */
  private reconcile(): void {
    const run = this.run;
    if (!run || run.halt.signal.aborted || this.reconciling) return;
    this.reconciling = true;
    try {
      const parts = this.options.parts.keys;
      const assigned = assignParts({ parts, members: this.view, owners: this.currentOwners() });
      const mine = new Set(assigned.get(this.memberId) ?? []);
      const revoke: string[] = [];
      for (const [key, slot] of this.slots) {
        const wanted = mine.has(key);
        if (wanted && slot.state === 'idle') this.acquire(key, run);
        else if (!wanted && slot.state === 'acquiring') slot.abort.abort();
        else if (!wanted && slot.state === 'held') revoke.push(key);
      }
      if (revoke.length > 0) void this.pending.track(this.revoke(revoke));
    } finally {
      this.reconciling = false;
    }
  }

  private later(): void {
    queueMicrotask(() => this.reconcile());
  }

  private acquire(key: string, run: Run): void {
    const abort = new AbortController();
    const slot: Slot = { state: 'acquiring', abort };
    this.slots.set(key, slot);
    const signal = AbortSignal.any([abort.signal, run.halt.signal]);
    void this.pending.track(
      this.backend.acquire(this.options.parts.lockOf(key), { timeoutMs: Infinity, signal }).then(
        (handle) => this.granted(key, slot, handle),
        (error: unknown) => this.failed(key, slot, signal, error),
      ),
    );
  }

  private granted(key: string, slot: Slot, handle: LockHandle): void {
    const current = this.slots.get(key) === slot && !this.run?.halt.signal.aborted;
    if (!current || handle.signal.aborted || !handle.isHeld()) {
      // Not wanted any more, stopping, or born lost: nobody was told of it.
      if (this.slots.get(key) === slot) this.slots.set(key, IDLE);
      void handle.release().catch(() => undefined);
      this.later();
      return;
    }
    const value = this.options.parts.valueOf(key);
    const owned: OwnedPart = new OwnedPart(this.group, value, handle, () => this.lost(key, owned));
    this.slots.set(key, { state: 'held', owned });
    this.tell({ assigned: this.valuesOf([key]) });
    void this.pending.track(this.publish(key, owned));
  }

  /**
   * Publishes the ownership (node and fencing token) in the part's record, for the CLI:
   * one write per grant, made `whileHolding` the part lock, so it cannot land once the
   * lock is gone. Tried again while ZooKeeper cannot be reached, given up once the ownership
   * ends; a write ZooKeeper refused (an ACL, say) leaves the token unshown and is reported
   * as a process warning, since nobody awaits it.
   */
  private async publish(key: string, owned: OwnedPart): Promise<void> {
    const { handle } = owned;
    const node = heldNode(handle);
    if (node === undefined) return; // a handle that does not tell its node: readers cannot match it
    const record: PartRecord = { node, token: handle.fencingToken.toString(), member: this.memberId };
    const holding = (): boolean => {
      const slot = this.slots.get(key);
      return slot?.state === 'held' && slot.owned === owned && owned.view.isHeld();
    };
    await writeWhileHolding(this.backend, this.options.parts.lockOf(key), { ...record }, handle, holding).catch(
      (error: unknown) => {
        // Compared by code: the backend may come from another copy of the package. A closed
        // client is a stop under way: nothing is wrong.
        if ((error as { code?: unknown } | null)?.code === 'CLIENT_CLOSED') return;
        process.emitWarning(partitionMessages.recordNotWritten(this.group, key, error), {
          code: 'NESTJS_ZK_LOCK_RECORD',
        });
      },
    );
  }

  private failed(key: string, slot: Slot, signal: AbortSignal, error: unknown): void {
    if (this.slots.get(key) !== slot) return;
    // Compared by code, not class: the backend may come from another copy of the package.
    if (signal.aborted || (error as { code?: unknown } | null)?.code === 'CLIENT_CLOSED') {
      this.slots.set(key, IDLE);
      this.later();
      return;
    }
    const timer = longTimeout(() => {
      if (this.slots.get(key) !== retry) return;
      this.slots.set(key, IDLE);
      this.reconcile();
    }, RETRY_DELAY_MS);
    const retry: Slot = { state: 'retrying', timer };
    this.slots.set(key, retry);
  }

  /** The lock of an owned part was lost: told at once (the lock's signal aborted), then released, and queued for again if still assigned. */
  private lost(key: string, owned: OwnedPart): void {
    const slot = this.slots.get(key);
    if (slot?.state !== 'held' || slot.owned !== owned) return; // being revoked: released by the revocation
    this.slots.set(key, IDLE);
    this.tell({ lost: this.valuesOf([key]) });
    // A lost lock is released too: after a short partition its session may live on, and
    // its node would then keep the part from everyone as long as the session lasts.
    void owned.handle.release().catch(() => undefined);
    this.later();
  }

  /** Gives parts up: tells `revoked`, lets `onRevoked` drain them (up to `revokeGraceMs`), then releases their locks. */
  private async revoke(keys: string[]): Promise<void> {
    const sorted = [...keys].sort(this.options.parts.compare);
    const owned = sorted.map((key) => {
      const slot = this.slots.get(key) as Owning;
      this.slots.set(key, { state: 'revoking', owned: slot.owned });
      return slot.owned;
    });
    this.tell({ revoked: this.valuesOf(sorted) });
    await this.drain(sorted);
    const { parts } = this.options;
    await Promise.all(
      sorted.map(async (key, i) => {
        owned[i].end(new LockLostError(parts.lockOf(key), partitionMessages.revoked(this.group, key)));
        await owned[i].handle.release().catch(() => undefined);
        if ((this.slots.get(key) as { owned?: OwnedPart }).owned === owned[i]) this.slots.set(key, IDLE);
      }),
    );
    this.later();
  }

  /** Runs `onRevoked` for `keys`, for at most `revokeGraceMs`; its signal aborts when that runs out. */
  private async drain(keys: string[]): Promise<void> {
    const { onRevoked, revokeGraceMs, parts } = this.options;
    if (!onRevoked) return;
    const grace = new AbortController();
    const over = new Promise<void>((resolve) => grace.signal.addEventListener('abort', () => resolve()));
    const timer = longTimeout(() => {
      grace.abort(new LockLostError(parts.lockOf(keys[0]), partitionMessages.graceOver(this.group, revokeGraceMs)));
    }, revokeGraceMs);
    try {
      await Promise.race([Promise.resolve().then(() => onRevoked(keys.map(parts.valueOf), grace.signal)), over]);
    } catch (error) {
      process.emitWarning(partitionMessages.onRevokedThrew(this.group, error), { code: 'NESTJS_ZK_LOCK_LISTENER' });
    } finally {
      timer.clear();
    }
  }

  private valuesOf(keys: string[]): Array<PartOf<T>> {
    const { parts } = this.options;
    return [...keys].sort(parts.compare).map((key) => parts.valueOf(key) as PartOf<T>);
  }

  private tell(change: Partial<Pick<PartitionChange, 'assigned' | 'revoked' | 'lost'>>): void {
    this.untold.push({
      group: this.group,
      assigned: (change.assigned ?? []) as Array<PartOf<T>>,
      revoked: (change.revoked ?? []) as Array<PartOf<T>>,
      lost: (change.lost ?? []) as Array<PartOf<T>>,
      owned: this.owned(),
    });
    if (this.telling) return; // told once the change under way is told to every listener
    this.telling = true;
    try {
      for (let next = this.untold.shift(); next; next = this.untold.shift()) {
        for (const listener of [...this.listeners]) {
          try {
            listener(next);
          } catch (error) {
            process.emitWarning(partitionMessages.listenerThrew(this.group, error), {
              code: 'NESTJS_ZK_LOCK_LISTENER',
            });
          }
        }
      }
    } finally {
      this.telling = false;
    }
  }
}

/** The backend's identity when it makes a member id, else a random one. */
function defaultMemberId(identity: string): string {
  try {
    encodeGroupName('memberId', identity);
    return identity;
  } catch {
    return crypto.randomUUID();
  }
}
