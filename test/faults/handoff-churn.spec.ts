import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend, ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';
import { runForTeeth } from '../support/run-for-teeth';

/**
 * Mixed readers and writers in all three node formats, across several
 * sessions that each reach ZooKeeper through a proxy whose connection is dropped at
 * random, with short timeouts (waiters giving up mid-wait: a blocker deleted under its
 * watcher) and revocation requests (data writes on holders' nodes: a watched node that
 * changes but does not go). Every grant is checked against the other live grants and
 * against ZooKeeper's own listing, read independently.
 */

// An independent reading of the node formats (not the library's parser).
const KAZOO = /^[0-9a-f]{32}(__lock__|__rlock__)(\d{10})$/;
const CURATOR = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-(lock-|__WRIT__|__READ__)(\d{10})$/;
function parse(node: string): { mode: 'read' | 'write'; seq: number } | null {
  const m = KAZOO.exec(node) ?? CURATOR.exec(node);
  if (!m) return null;
  return { mode: m[1] === '__rlock__' || m[1] === '__READ__' ? 'read' : 'write', seq: Number(m[2]) };
}

/** The nodes of `children` that must be gone for `node` to hold. */
function blockersOf(children: readonly string[], node: string): string[] {
  const me = parse(node)!;
  return children.filter((child) => {
    const other = parse(child);
    if (!other || other.seq >= me.seq) return false;
    return me.mode === 'write' || other.mode === 'write';
  });
}

describe('handoff under churn', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    fx = await LockFixture.create('handoff-churn');
  });
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('never two holders, never a waiter stuck, nothing left behind', async () => {
    const backends: ZkLockBackend[] = [];
    for (let i = 0; i < 4; i++) {
      const proxy = new TcpProxy(zkPort());
      await proxy.start();
      proxies.push(proxy);
      backends.push(await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 8000 }));
    }
    const name = 'churn';
    const dir = backends[0].pathOf(name);
    const holders = new Set<ZkLockHandle>();
    const violations: string[] = [];
    let grants = 0;
    let timeouts = 0;
    let running = true;

    const check = async (lock: ZkLockHandle): Promise<void> => {
      // In memory: against every other grant still trusted.
      for (const other of holders) {
        if (other === lock) continue;
        if (!other.isHeld() || !lock.isHeld()) continue;
        if (lock.mode === 'write' || other.mode === 'write')
          violations.push(`overlap: ${lock.mode} ${nodeOf(lock)} with ${other.mode} ${nodeOf(other)}`);
      }
      // In ZooKeeper: no node that blocks ours may exist (sequence numbers only grow, so
      // reading after the grant is as good as reading at it).
      const children = (await fx.inspector.children(dir)) ?? [];
      if (!children.includes(nodeOf(lock)) && lock.isHeld()) violations.push(`granted node missing: ${nodeOf(lock)}`);
      const blockers = blockersOf(children, nodeOf(lock));
      if (blockers.length > 0 && lock.isHeld())
        violations.push(`${lock.mode} ${nodeOf(lock)} granted ahead of ${blockers.join(', ')}`);
    };

    const formats = ['kazoo', 'curator-rw', 'curator-mutex'] as const;
    const loop = async (backend: ZkLockBackend, seed: number): Promise<void> => {
      let i = seed;
      while (running) {
        i++;
        const nodeFormat = formats[i % 3];
        const mode = nodeFormat === 'curator-mutex' || Math.random() < 0.5 ? 'write' : 'read';
        const timeoutMs = Math.random() < 0.3 ? 1 + Math.floor(Math.random() * 30) : 30_000;
        let lock: ZkLockHandle;
        try {
          lock = await backend.acquire(name, { mode, nodeFormat, timeoutMs });
        } catch (error) {
          // A short wait may also end in a connection drop of the churn: nobody could be asked then.
          const name = (error as Error).name;
          if (name === 'LockTimeoutError' || (name === 'LockUnavailableError' && timeoutMs < 30_000)) {
            timeouts++;
            continue;
          }
          throw error;
        }
        grants++;
        holders.add(lock);
        await check(lock);
        await sleep(Math.random() * 4);
        holders.delete(lock);
        await lock.release();
      }
    };

    const chaos = async (): Promise<void> => {
      while (running) {
        await sleep(80 + Math.random() * 200);
        if (!running) break;
        const r = Math.random();
        if (r < 0.5) proxies[Math.floor(Math.random() * proxies.length)].drop();
        else await backends[0].requestRevocation(name).catch(() => undefined);
      }
    };

    const loops = backends.flatMap((backend, b) => [loop(backend, b), loop(backend, b + 1), loop(backend, b + 2)]);
    const chaosDone = chaos();
    await runForTeeth(15_000, () => grants > 50 && timeouts > 0);
    running = false;
    await chaosDone;
    // Every loop must come home: a waiter that never wakes fails this.
    const giveUp = new AbortController();
    const finished = await Promise.race([
      Promise.allSettled(loops),
      sleep(40_000, undefined, { signal: giveUp.signal }).then(() => 'stuck' as const),
    ]);
    giveUp.abort();
    expect(finished).not.toBe('stuck');
    const failures = (finished as PromiseSettledResult<void>[]).filter((r) => r.status === 'rejected');
    expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);
    expect(violations).toEqual([]);
    expect(grants).toBeGreaterThan(50);
    expect(timeouts).toBeGreaterThan(0); // waiters did give up mid-wait
    // Nothing left in ZooKeeper: no node, no directory (a delete cut by a drop is retried in the background).
    await waitUntil(async () => (await fx.inspector.children(dir)) === null, 'the lock directory removed');
    for (const backend of backends) expect(backend.client.session.watcherCount()).toBe(0);
  }, 120_000);
});
