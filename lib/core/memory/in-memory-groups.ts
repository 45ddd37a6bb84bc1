import { MemberReplacedError } from '../errors/errors.js';
import { byMemberId, type GroupEntry, type GroupMember, type MemberData } from '../port/group.js';
import type { InMemoryWatches } from './in-memory-watches.js';

interface Entry {
  readonly json: string;
  readonly since: Date;
  readonly sessionId: string;
  /** The entry's handle: told when another joins with its id. */
  readonly handle: InMemoryGroupEntry;
}

/** The groups of one store: each an id → entry map, as ZooKeeper's ephemeral nodes of a group directory. */
export class InMemoryGroups {
  private readonly groups = new Map<string, Map<string, Entry>>();

  constructor(private readonly watches: InMemoryWatches) {}

  /** Joins (taking the id over from an entry already there, whose signal aborts first). */
  join(
    group: string,
    id: string,
    json: string,
    sessionId: string,
    onEnd: (entry: InMemoryGroupEntry) => void,
  ): InMemoryGroupEntry {
    this.groups.get(group)?.get(id)?.handle.replaced(); // told first; its removal may drop the group's map
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Map()));
    const handle = new InMemoryGroupEntry(group, id, (entry) => {
      this.remove(entry);
      onEnd(entry);
    });
    members.set(id, { json, since: new Date(), sessionId: `0x${sessionId}`, handle });
    this.watches.changed(`group:${group}`);
    return handle;
  }

  members(group: string): GroupMember[] {
    const members = [...(this.groups.get(group) ?? [])];
    return members
      .map(([id, { json, since, sessionId }]) => ({ id, data: JSON.parse(json) as MemberData, since, sessionId }))
      .sort(byMemberId);
  }

  private remove(entry: InMemoryGroupEntry): void {
    const members = this.groups.get(entry.group);
    if (members?.get(entry.id)?.handle !== entry) return; // replaced: the id is another's now
    members.delete(entry.id);
    if (members.size === 0) this.groups.delete(entry.group);
    this.watches.changed(`group:${entry.group}`);
  }
}

/** An entry in an in-memory group: it lasts until `leave()`, its backend's `close()`, or a replacement. */
export class InMemoryGroupEntry implements GroupEntry {
  private readonly ended = new AbortController();
  private left = false;

  constructor(
    readonly group: string,
    readonly id: string,
    private readonly onLeave: (entry: InMemoryGroupEntry) => void,
  ) {}

  get signal(): AbortSignal {
    return this.ended.signal;
  }

  /** Another client joined with this id: the entry is out, told by its signal. */
  replaced(): void {
    if (this.left) return;
    this.left = true;
    this.ended.abort(new MemberReplacedError(this.group, this.id));
    this.onLeave(this);
  }

  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    this.onLeave(this);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.leave();
  }
}
