import { isZkCode } from './zk-error-code.js';

/** ZooKeeper appends ten digits to a sequential node's name. */
const SEQUENCE_DIGITS = 10;

/** What `OwnNodes.settle` needs of the session it deletes on. */
export interface SettlingSession {
  /** A write answered once the leader committed it: later reads see every earlier write of the session. */
  barrier(): Promise<void>;
  getChildren(path: string): Promise<{ children: string[] }>;
  remove(path: string): Promise<void>;
}

/**
 * The ephemeral nodes a session object made, or may have made (a create whose reply never
 * came), and has not deleted. When the client re-attaches to its server session after
 * declaring it lost, every holder in it has been told its lock is lost and every waiter
 * has queued again with a new node: a waiter's node would block everyone until the server
 * session ends, so the re-attached session deletes it first (`settle`). A holder's node
 * (`held`) stays until its owner releases it: its work may still run, and the session
 * that keeps it lives. Works on every server version (ZooKeeper 3.6's `getEphemerals`
 * would need one).
 */
export class OwnNodes {
  /** Paths of nodes created and not deleted. */
  private readonly made = new Set<string>();
  /** Requested paths (before the sequence digits) of creates not answered. */
  private readonly asked = new Set<string>();
  /**
   * Paths of nodes granted to an owner that has not released them. One set for every
   * session object of the same server session: an owner may release after its object was
   * replaced, and the next one must then see it.
   */
  private readonly held: Set<string>;

  /** Takes over what `previous` left: it was the same server session. */
  constructor(previous?: OwnNodes) {
    for (const path of previous?.made ?? []) this.made.add(path);
    for (const path of previous?.asked ?? []) this.asked.add(path);
    this.held = previous?.held ?? new Set();
  }

  get size(): number {
    return this.made.size + this.asked.size;
  }

  /** An ephemeral create of `requested` is sent (a sequential one's name gets its digits). */
  creating(requested: string): void {
    this.asked.add(requested);
  }

  /** It was answered: `path` was created, or (`undefined`) ZooKeeper refused it. */
  answered(requested: string, path: string | undefined): void {
    this.asked.delete(requested);
    if (path !== undefined) this.made.add(path);
  }

  /** `path` is gone (deleted, or ZooKeeper said it does not exist). */
  removed(path: string): void {
    this.made.delete(path);
    this.held.delete(path);
    this.asked.delete(path); // not sequential
    this.asked.delete(path.slice(0, -SEQUENCE_DIGITS));
  }

  /** `path` was granted: `settle` leaves it to its owner (`letGo`). */
  hold(path: string): void {
    this.held.add(path);
  }

  /** The owner of `path` released it: `settle` deletes it if it is still listed. */
  letGo(path: string): void {
    this.held.delete(path);
  }

  /**
   * Deletes every node listed but the held ones, on a re-attached `session`: the barrier first (a server
   * behind the leader would hide a create that happened; its answer also proves the
   * re-attach, see `QuorumEvidence`), then unanswered creates found by their name (each
   * carries its attempt's guid), then all deletes at once. Rejects with the first failure
   * (a connection loss: call again once connected; what was deleted is off the list).
   */
  async settle(session: SettlingSession): Promise<void> {
    await session.barrier();
    const found = await Promise.all([...this.asked].map((requested) => this.find(session, requested)));
    const paths = [...[...this.made].filter((path) => !this.held.has(path)), ...found.flat()];
    await Promise.all(
      paths.map(async (path) => {
        try {
          await session.remove(path);
        } catch (error) {
          if (!isZkCode(error, 'NO_NODE')) throw error;
        }
        this.removed(path);
      }),
    );
  }

  private async find(session: SettlingSession, requested: string): Promise<string[]> {
    const slash = requested.lastIndexOf('/');
    const [dir, name] = [requested.slice(0, slash), requested.slice(slash + 1)];
    let children: string[] = [];
    try {
      ({ children } = await session.getChildren(dir || '/'));
    } catch (error) {
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
    const ours = children.filter(
      (child) => child === name || (child.startsWith(name) && child.length === name.length + SEQUENCE_DIGITS),
    );
    if (ours.length === 0) this.asked.delete(requested);
    return ours.map((child) => `${dir}/${child}`);
  }
}
