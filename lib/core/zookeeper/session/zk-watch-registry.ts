import type * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError } from '../../errors/errors.js';

export type ZkWatchListener = (event: { readonly type: string; readonly path: string }) => void;

/** What node-zookeeper-client calls with a watch's notification. */
export type ZkWatcher = (event: zookeeper.Event) => void;

/**
 * Who waits on which ZooKeeper watch. One watch serves every listener of a path; a
 * notification wakes them all and clears the path (ZooKeeper watches fire once).
 */
export class ZkWatchRegistry {
  private readonly listeners = new Map<string, Set<ZkWatchListener>>();

  /** `notified`: told of each notification, before its listeners (the session counts them). */
  constructor(private readonly notified: () => void) {}

  /** The watcher every watched read gives the client: wakes the listeners of the notified path. */
  readonly dispatch: ZkWatcher = (event) => {
    this.notified();
    this.fire(event.getName(), event.getPath());
  };

  /**
   * A read with a one-shot watch, `listener` registered before asking: the reply and the
   * notification can arrive in one TCP chunk, and the client emits the notification before
   * our promise for the reply resolves. `send` asks, with `dispatch` as the watcher. `null`
   * when the node does not exist (then nothing is watched, and the listener is dropped).
   */
  async read<T>(
    path: string,
    listener: ZkWatchListener,
    send: (watcher: ZkWatcher) => Promise<unknown[]>,
    result: (reply: unknown[]) => T,
  ): Promise<T | null> {
    this.add(path, listener);
    try {
      const reply = await send(this.dispatch);
      return result(reply);
    } catch (error) {
      this.remove(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

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
