import { LockLostError, ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { waitUntil } from './wait-until';
import { fourLetter } from './zookeeper/four-letter';
import type { ZkInspector } from './zookeeper/zk-inspector';
import type { ZkServer } from './zookeeper/zk-server';

/** What happened around a cut made while one client held a lock and another waited for it. */
export interface CutOutcome {
  held: ZkLockHandle;
  /** The waiter's grant. */
  lock: ZkLockHandle;
  cutAt: number;
  /** When the holder's signal aborted; 0 if it never did. */
  abortedAt: number;
  grantedAt: number;
}

/**
 * `holder` takes `name`, `waiter` queues behind it (seen by `inspector`, on the majority's
 * side), then `cut()` runs; resolves once the waiter is granted. `releaseWhenTold`: the
 * holder releases as its signal aborts, as a holder that reads it does (its node otherwise
 * stays while its session lives on, see docs/fencing.md).
 */
export async function cutWhileHolding(
  holder: ZkLockBackend,
  waiter: ZkLockBackend,
  inspector: ZkInspector,
  name: string,
  cut: () => void,
  { releaseWhenTold = false } = {},
): Promise<CutOutcome> {
  const held = await holder.acquire(name);
  let abortedAt = 0;
  held.signal.addEventListener('abort', () => {
    abortedAt = performance.now();
    if (releaseWhenTold) void held.release();
  });
  const waiting = waiter.acquire(name, { timeoutMs: 60_000 }).then((lock) => ({ lock, at: performance.now() }));
  await waitUntil(async () => (await inspector.children(holder.pathOf(name)))?.length === 2, 'the waiter queues');
  const cutAt = performance.now();
  cut();
  const { lock, at: grantedAt } = await waiting;
  return { held, lock, cutAt, abortedAt, grantedAt };
}

/**
 * The holder was told (its signal aborted with a LockLostError) strictly before the waiter
 * was granted, and on the majority's side the waiter's node is the only one left.
 */
export async function expectToldBeforeGrant(outcome: CutOutcome, inspector: ZkInspector): Promise<void> {
  const { held, lock, abortedAt, grantedAt } = outcome;
  expect(abortedAt).toBeGreaterThan(0);
  expect(abortedAt).toBeLessThan(grantedAt);
  expect(held.signal.reason).toBeInstanceOf(LockLostError);
  expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
  expect(await inspector.children(lock.path.slice(0, lock.path.lastIndexOf('/')))).toEqual([nodeOf(lock)]);
}

/** The node's name, without its directory. */
export function nodeOf(lock: ZkLockHandle): string {
  return lock.path.slice(lock.path.lastIndexOf('/') + 1);
}

/** A suite's clients on one root, each with `sessionTimeoutMs`: `connect` opens one, `closeAll` closes them all. */
export function suiteClients(
  rootPath: string,
  sessionTimeoutMs: number,
): { connect(connectionString: string): Promise<ZkLockBackend>; closeAll(): Promise<unknown> } {
  const clients: ZkLockBackend[] = [];
  return {
    async connect(connectionString) {
      const options = { connectionString, rootPath, sessionTimeoutMs, emptyDirectoryGraceMs: 0 };
      const client = await ZkLockBackend.connect(options);
      clients.push(client);
      return client;
    },
    closeAll: () => Promise.allSettled(clients.splice(0).map((c) => c.close())),
  };
}

/** The index of the server `client`'s session is connected to, from the servers' `cons`; undefined if none lists it. */
export async function serverOf(servers: readonly ZkServer[], client: ZkLockBackend): Promise<number | undefined> {
  const sid = `sid=0x${BigInt(`0x${client.client.session.id}`).toString(16)}`;
  for (const [i, server] of servers.entries())
    if ((await fourLetter(server.clientPort, 'cons').catch(() => '')).includes(sid)) return i;
  return undefined;
}
