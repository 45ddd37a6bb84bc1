import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import { lastZxid } from '../support/server-state.js';
import type { IdleParams, IdleResult } from '../workers/impl.protocol.js';
import { now, range } from './bench-impl.js';

/** How the idle op opens its sessions: with a timeout of its own, and lock directories kept (their deletes would count). */
export type OpenIdleSession = (sessionTimeoutMs: number) => Promise<ZkLockBackend>;

/**
 * Scenario 9. Transactions are counted by the server's last zxid (`srvr`), so nothing else
 * may write meanwhile: the scenario runs alone, and each window starts once the writes
 * before it are committed.
 */
export async function oursIdle(
  open: OpenIdleSession,
  close: (backend: ZkLockBackend) => Promise<void>,
  server: string,
  { name, clients, sessionTimeoutMs, holdMs, warmAcquires }: IdleParams,
): Promise<IdleResult> {
  const backends = await Promise.all(range(clients).map(() => open(sessionTimeoutMs)));
  const names = backends.map((_, i) => `${name}-${i}`);
  try {
    // Each name's directory made, so that every acquire timed below costs the same requests.
    await Promise.all(backends.map(async (backend, i) => (await backend.acquire(names[i])).release()));
    const settleMs = sessionTimeoutMs / 10; // the last writes (and a heartbeat sent with them) committed
    await sleep(settleMs);
    const idleMs = Math.round(0.6 * sessionTimeoutMs);
    const idleTransactions = await committedDuring(server, () => sleep(idleMs));
    const afterIdleNs: number[] = [];
    const held = [];
    for (const [i, backend] of backends.entries()) {
      const start = now();
      held.push(await backend.acquire(names[i]));
      afterIdleNs.push(Number(now() - start));
    }
    await Promise.all(held.slice(1).map((handle) => handle.release()));
    await Promise.all(backends.slice(1).map(close));
    await sleep(settleMs);
    const holdTransactions = await committedDuring(server, () => sleep(holdMs));
    await held[0].release();
    const warmNs: number[] = [];
    for (let i = 0; i < warmAcquires; i++) {
      const start = now();
      const handle = await backends[0].acquire(names[0]);
      warmNs.push(Number(now() - start));
      await handle.release();
    }
    return { idleTransactions, idleMs, holdTransactions, holdMs, afterIdleNs, warmNs };
  } finally {
    await Promise.allSettled(backends.map(close));
  }
}

/** Transactions the server (`host:port`) committed while `work` ran. */
async function committedDuring(server: string, work: () => Promise<unknown>): Promise<number> {
  const before = await lastZxid(server);
  await work();
  return Number((await lastZxid(server)) - before);
}
