import { InvalidOptionError, NotLeaderError } from '../errors/errors.js';
import { leaderMessages } from '../errors/messages.js';
import { followChanges } from '../membership/watched-read.js';
import { heldNode, type LockBackend, type RecordData } from '../port/lock-backend.js';
import { MAX_RECORD_BYTES } from '../port/options.js';
import { writeWhileHolding } from '../util/write-while-holding.js';
import type { LeadershipTerm } from './leadership-term.js';

/** A value a leader proclaims: anything `JSON.stringify` writes and `JSON.parse` gives back. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { readonly [key: string]: JsonValue };

/** The largest proclaimed value, as UTF-8 JSON: the term's record keeps a little room of its own. */
export const MAX_PROCLAIMED_BYTES = MAX_RECORD_BYTES - 1024;

/** Who leads a group now, as every observer is told it. */
export interface LeaderInfo {
  readonly group: string;
  /** The leader's identity (its backend's `identity`, by default `host:pid:instance`), as `contenders()` shows it. */
  readonly leader: string | null;
  /** The leader's lock node: one per term, never reused. */
  readonly node: string;
  /** The term's fencing token (the leader lock's, see `LeaderTerm.fencingToken`): it rises with every term. */
  readonly fencingToken: bigint;
  /** What the leader proclaimed in this term (`proclaim`), `null` until it does. */
  readonly value: JsonValue | null;
}

export type LeaderObserver = (leader: LeaderInfo | null) => void;

/**
 * What the leader's term record says: written by the leader only, in one transaction with a
 * check that its lock node still exists (`writeRecord` with `whileHolding`), so a record
 * naming a node was written while that node led. Observers believe the record only for the
 * node that holds the lock now: a record left by an earlier term (or a late write of it)
 * names another node, and is never shown as the current leader's (Curator's getLeader race,
 * CURATOR-358).
 */
interface TermRecord {
  readonly node: string;
  readonly token: string;
  readonly value: JsonValue | null;
}

/**
 * The leader directory of one group: the term record the leader keeps under the record
 * name `leader:<group>` (beside the locks, see `LockBackend.readRecord`), and what
 * observers read of it and of the leader lock's queue.
 */
export class LeaderDirectory {
  /** What this instance proclaimed last: said again at each term it wins. */
  private value: JsonValue | null = null;
  /** This instance's record writes, one after the other. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly backend: LockBackend,
    readonly group: string,
    /** The leader lock, `leader:<group>`: also the term record's name. */
    readonly lockName: string,
  ) {}

  /**
   * A term began: its record is written (one write per term; nothing while it lasts).
   * Tried again while the term leads, if the backend could not be reached.
   */
  termBegan(term: LeadershipTerm): void {
    void this.write(term, this.value).catch(() => undefined);
  }

  /**
   * Writes `value` as what this leader says, for its observers; said again at each later
   * term this instance wins. Rejects with `NotLeaderError` when `term` is not leading (or
   * stops before the write lands: nothing was written then), `InvalidOptionError` for a
   * value that is not JSON or is larger than `MAX_PROCLAIMED_BYTES`.
   */
  async proclaim(term: LeadershipTerm | undefined, value: JsonValue): Promise<void> {
    checkValue(value);
    if (!term?.isLeading) throw new NotLeaderError(this.group);
    this.value = value;
    await this.write(term, value);
  }

  /** Who leads now: the lock's holder, with its term record; `null` while nobody leads, or the leader has not written its record yet. */
  async read(): Promise<LeaderInfo | null> {
    const forever = { timeoutMs: Infinity };
    const holder = (await this.backend.contenders(this.lockName, forever)).find((contender) => contender.holding);
    if (!holder) return null;
    const record = termRecordOf((await this.backend.readRecord(this.lockName, forever))?.data);
    if (!record || record.node !== holder.node) return null;
    const { group } = this;
    return {
      group,
      leader: holder.identity,
      node: holder.node,
      fencingToken: BigInt(record.token),
      value: record.value,
    };
  }

  /**
   * Tells `listener` who leads now, then at every change, until the returned function is
   * called. Watches the lock's queue and the term record; reads only.
   */
  observe(listener: LeaderObserver, retryDelayMs: number): () => void {
    const stop = new AbortController();
    let told: string | undefined;
    void followChanges({
      backend: this.backend,
      targets: [{ lock: this.lockName }, { record: this.lockName }],
      read: () => this.read(),
      onRead: (leader) => {
        const key = leader ? `${leader.node}\n${leader.fencingToken}\n${JSON.stringify(leader.value)}` : '';
        if (key === told) return; // read again after a change of no concern (a waiter queued)
        told = key;
        try {
          listener(leader);
        } catch (error) {
          process.emitWarning(leaderMessages.observerThrew(this.group, error), { code: 'NESTJS_ZK_LOCK_LISTENER' });
        }
      },
      stop: stop.signal,
      retryDelayMs,
    });
    return () => stop.abort();
  }

  /** Writes the term record for `term`, after this instance's earlier writes; retried while the term leads. */
  private write(term: LeadershipTerm, value: JsonValue | null): Promise<void> {
    const node = heldNode(term.handle);
    const written = this.writes.then(async () => {
      if (node === undefined) return; // a handle that does not tell its node: observers cannot match it
      const data: RecordData = { node, token: term.handle.fencingToken.toString(), value } satisfies TermRecord;
      const landed = await writeWhileHolding(this.backend, this.lockName, data, term.handle, () => term.isLeading);
      if (!landed) throw new NotLeaderError(this.group);
    });
    this.writes = written.catch(() => undefined);
    return written;
  }
}

/** The term record in `data`, or `undefined` for anything else (none yet, or written by another tool). */
function termRecordOf(data: RecordData | undefined): TermRecord | undefined {
  if (!data || typeof data.node !== 'string' || typeof data.token !== 'string' || !/^-?\d+$/.test(data.token))
    return undefined;
  return { node: data.node, token: data.token, value: (data.value ?? null) as JsonValue | null };
}

function checkValue(value: unknown): void {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (json === undefined || Buffer.byteLength(json, 'utf8') > MAX_PROCLAIMED_BYTES)
    throw new InvalidOptionError('value', value, `a JSON value of at most ${MAX_PROCLAIMED_BYTES} bytes as JSON`);
}
