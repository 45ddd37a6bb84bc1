import type { Unwatch } from '../port/group.js';

/**
 * Who waits for a change of what, in one store: `lock:<name>`, `record:<name>`,
 * `group:<name>`. One-shot, as ZooKeeper's watches: a change wakes every watcher of its
 * key once, in a later microtask (never inside the change), and forgets them.
 */
export class InMemoryWatches {
  private readonly waiting = new Map<string, Set<() => void>>();

  add(key: string, onChange: () => void): Unwatch {
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    const once = (): void => onChange();
    set.add(once);
    return () => {
      const current = this.waiting.get(key);
      current?.delete(once);
      if (current?.size === 0) this.waiting.delete(key);
    };
  }

  changed(key: string): void {
    const set = this.waiting.get(key);
    if (!set) return;
    this.waiting.delete(key);
    queueMicrotask(() => {
      for (const onChange of set) onChange();
    });
  }
}
