import type { EventEmitter } from 'node:events';

import type { Client } from 'node-zookeeper-client';

import { ReentrantLocker, ZkLockBackend } from '../../lib/index.js';
import { dropConnection } from '../../lib/core/zookeeper/session/zk-client-internals.js';
import type { ZkSession } from '../../lib/core/zookeeper/session/zk-session.js';

/** One lock client under test: its backend, the reentrant locker over it, and what happened to its session. */
export interface SoakClient {
  readonly backend: ZkLockBackend;
  readonly locker: ReentrantLocker;
  /** The session id it started with: a reconnect must keep it (no expiry in a soak). */
  readonly firstSessionId: string;
  reconnects: number;
  sessionsLost: number;
}

/** The library's own bookkeeping, read without changing it (private fields by name, for this check only). */
interface BackendInternals {
  readonly held: Set<unknown>;
  readonly waits: Map<unknown, unknown>;
}
interface RawClientInternals {
  readonly connectionManager: {
    readonly pendingQueue: unknown[];
    readonly watcherManager: Record<'dataWatchers' | 'childWatchers' | 'existenceWatchers', Record<string, unknown>>;
  };
}
const rawClientOf = (session: ZkSession): Client => (session as unknown as { client: Client }).client;

/** Several lock clients on one ZooKeeper, each with its own session. */
export class ClientPool {
  private constructor(readonly clients: readonly SoakClient[]) {}

  static async open(connectionString: string, rootPath: string, count: number): Promise<ClientPool> {
    const clients = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const backend = await ZkLockBackend.connect({
          connectionString,
          rootPath,
          sessionTimeoutMs: 10_000,
          identity: `soak-${i}`,
        });
        const client: SoakClient = {
          backend,
          locker: new ReentrantLocker(backend, 10_000),
          firstSessionId: backend.client.session.id,
          reconnects: 0,
          sessionsLost: 0,
        };
        // The first connect is over by now: every later 'connected' is a reconnect.
        backend.client.on('connected', () => client.reconnects++);
        backend.client.on('session-lost', () => client.sessionsLost++);
        return client;
      }),
    );
    return new ClientPool(clients);
  }

  /** Closes the client's socket; its session lives on and it reconnects at once (as in test/faults). */
  dropConnection(index: number): void {
    dropConnection(rawClientOf(this.clients[index % this.clients.length].backend.client.session));
  }

  /** Resolves once every client is connected again (after the drops), or throws after `timeoutMs`. */
  async whenAllConnected(timeoutMs = 15_000): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (!this.clients.every((c) => c.backend.client.session.isConnected)) {
      if (performance.now() > until) throw new Error(`not every client reconnected within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Session ids as ZooKeeper prints them in `wchc` (a bigint each). */
  sessionIds(): bigint[] {
    return this.clients.map((c) => BigInt(`0x${c.backend.client.session.id}`));
  }

  /** Counts the library keeps, summed over clients: each should stay flat when idle. */
  libraryCounts(): Record<'watchers' | 'rawWatchPaths' | 'heldOrWaiting' | 'pendingRequests' | 'listeners', number> {
    let watchers = 0,
      rawWatchPaths = 0,
      heldOrWaiting = 0,
      pendingRequests = 0,
      listeners = 0;
    for (const { backend } of this.clients) {
      const session = backend.client.session;
      watchers += session.watcherCount();
      const internals = backend as unknown as BackendInternals;
      heldOrWaiting += internals.held.size + internals.waits.size;
      const manager = (rawClientOf(session) as unknown as RawClientInternals).connectionManager;
      pendingRequests += manager.pendingQueue.length;
      const w = manager.watcherManager;
      rawWatchPaths +=
        Object.keys(w.dataWatchers).length +
        Object.keys(w.childWatchers).length +
        Object.keys(w.existenceWatchers).length;
      // setMaxListeners(0) on these emitters hides the usual warning: count them ourselves.
      for (const emitter of [backend.client, session, rawClientOf(session) as unknown as EventEmitter])
        listeners += listenerTotal(emitter);
    }
    return { watchers, rawWatchPaths, heldOrWaiting, pendingRequests, listeners };
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.backend.close()));
  }
}

function listenerTotal(emitter: EventEmitter): number {
  return emitter.eventNames().reduce((sum, event) => sum + emitter.listenerCount(event), 0);
}
