export type ZkWatchListener = (event: { readonly type: string; readonly path: string }) => void;

/**
 * Who waits on which ZooKeeper watch. One watch serves every listener of a path; a
 * notification wakes them all and clears the path (ZooKeeper watches fire once).
 */
export class ZkWatchRegistry {
  private readonly listeners = new Map<string, Set<ZkWatchListener>>();

  add(path: string, listener: ZkWatchListener): void {
    let set = this.listeners.get(path);
    if (!set) this.listeners.set(path, (set = new Set()));
    set.add(listener);
  }

  remove(path: string, listener: ZkWatchListener): void {
    const set = this.listeners.get(path);
    set?.delete(listener);
    if (set?.size === 0) this.listeners.delete(path);
  }

  /** A notification for `path`: every listener of it, once. */
  fire(type: string, path: string): void {
    const set = this.listeners.get(path);
    this.listeners.delete(path);
    for (const listener of set ?? []) listener({ type, path });
  }

  /** Wakes every listener of every path with `type` (the session is gone). */
  fireAll(type: string): void {
    for (const path of [...this.listeners.keys()]) this.fire(type, path);
  }

  count(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }
}
