import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend } from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/lease/zk-lease.handle';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

/**
 * Contenders that disagree on maxLeases, racing for one semaphore whose directory
 * (and with it the stored count) goes every time it falls empty (emptyDirectoryGraceMs 0)
 * and is made again by whichever first creator wins: each acquire picks its count at
 * random from {1, 2, 3}, so the directory is re-created again and again by racing first
 * creators of different counts, and an acquire whose client checked the previous
 * directory (same name, another count) lands in the new one.
 *
 * Every grant is checked while it is held: ZooKeeper's directory (read independently)
 * stores the count the grant was made with; every other grant still trusted was made with
 * the same count (two counts held at once means one of them was granted under a count the
 * directory does not have); never more trusted grants than that count; the grant's node is
 * among the first maxLeases in ZooKeeper's listing. Afterwards nothing is left.
 */

const LEASE = /^[0-9a-f]{32}__lease__(\d{10})$/;
const seqOf = (node: string): number => Number(LEASE.exec(node)![1]);
const leafOf = (lease: ZkLeaseHandle): string => lease.path.slice(lease.path.lastIndexOf('/') + 1);

describe('lease counts that disagree, racing for a directory that comes and goes', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];
  beforeAll(async () => (fx = await LockFixture.create('lease-marker-race')));
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('a grant is only ever made under the count its directory stores, and never beyond it', async () => {
    const backends: ZkLockBackend[] = [];
    const proxied: TcpProxy[] = [];
    for (let i = 0; i < 4; i++) backends.push(await fx.backend({ sessionTimeoutMs: 4000 }));
    // Two more through proxies whose connections are dropped and whose replies are cut, so that
    // directory creates, reads and node creates are retried after a reconnect.
    for (let i = 0; i < 2; i++) {
      const proxy = new TcpProxy(zkPort());
      await proxy.start();
      proxies.push(proxy);
      proxied.push(proxy);
      backends.push(await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 4000 }));
    }
    const name = 'racing';
    const dir = backends[0].pathOf(name);
    const live = new Set<ZkLeaseHandle>();
    const violations: string[] = [];
    const failures: string[] = [];
    const grantsByCount = new Map<number, number>();
    const tally = { rounds: 0, grants: 0, mismatches: 0, timeouts: 0, countChanges: 0, checked: 0 };
    let lastCount = 0;
    let running = true;

    const check = async (lease: ZkLeaseHandle): Promise<void> => {
      const max = lease.maxLeases;
      if (lease.isHeld()) {
        const trusted = [...live].filter((other) => other.isHeld());
        const others = trusted.filter((other) => other.maxLeases !== max);
        if (others.length > 0)
          violations.push(
            `granted with maxLeases ${max} while ${others.map((o) => `${leafOf(o)} (maxLeases ${o.maxLeases})`).join(', ')} held`,
          );
        if (trusted.length > max) violations.push(`${trusted.length} trusted grants with maxLeases ${max}`);
      }
      const [data, children] = await Promise.all([fx.inspector.data(dir), fx.inspector.children(dir)]);
      if (!lease.isHeld()) return;
      tally.checked++;
      const stored = data ? (JSON.parse(data) as { maxLeases: number }).maxLeases : undefined;
      if (stored !== max) violations.push(`granted with maxLeases ${max} in a directory storing ${stored}`);
      const queue = (children ?? []).filter((c) => LEASE.test(c)).sort((x, y) => seqOf(x) - seqOf(y));
      const index = queue.indexOf(leafOf(lease));
      if (index < 0 || index >= max) violations.push(`grant ${leafOf(lease)} at ${index} in ${queue.join(', ')}`);
      if (stored !== lastCount) tally.countChanges++;
      lastCount = stored ?? 0;
    };

    /** One acquire with a count of its own, held briefly if granted. */
    const once = async (backend: ZkLockBackend): Promise<void> => {
      const maxLeases = 1 + Math.floor(Math.random() * 3);
      const timeoutMs = [0, 20, 300][Math.floor(Math.random() * 3)];
      await sleep(Math.random() * 3);
      let lease: ZkLeaseHandle;
      try {
        lease = await backend.acquireLease(name, { maxLeases, timeoutMs });
      } catch (error) {
        const kind = (error as Error).name;
        if (kind === 'LeaseLimitMismatchError') tally.mismatches++;
        else if (kind === 'LockTimeoutError') tally.timeouts++;
        else failures.push(`${kind}: ${(error as Error).message}`);
        return;
      }
      tally.grants++;
      grantsByCount.set(maxLeases, (grantsByCount.get(maxLeases) ?? 0) + 1);
      live.add(lease);
      await check(lease);
      await sleep(Math.random() * 8);
      live.delete(lease);
      await lease.release();
    };
    // Rounds: every call of a round starts at once, with its own count, on a directory that the
    // last round's releases removed: the first creators race, then the losers and the
    // clients that checked an earlier directory (another count, same name) come in.
    const rounds = async (): Promise<void> => {
      while (running) {
        tally.rounds++;
        await Promise.all(backends.flatMap((backend) => [once(backend), once(backend)]));
      }
    };

    const ops = [ZK_OP.create, ZK_OP.getData, ZK_OP.getChildren2, ZK_OP.delete];
    const chaos = async (): Promise<void> => {
      while (running) {
        await sleep(80 + Math.random() * 200);
        const proxy = proxied[Math.floor(Math.random() * proxied.length)];
        if (Math.random() < 0.5) proxy.drop();
        else void proxy.cutAfter(ops[Math.floor(Math.random() * ops.length)]);
      }
    };

    const loops = [rounds()];
    const chaosDone = chaos();
    await sleep(15_000);
    running = false;
    await chaosDone;
    const results = await Promise.allSettled(loops);
    expect(
      results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
    ).toEqual([]);
    expect(failures).toEqual([]);
    expect(violations).toEqual([]);
    // The race did happen: grants under each count, the stored count changing many times, refusals.
    expect([...grantsByCount.keys()].sort()).toEqual([1, 2, 3]);
    expect(tally.countChanges).toBeGreaterThan(20);
    expect(tally.mismatches).toBeGreaterThan(50);
    expect(tally.checked).toBeGreaterThan(100);

    await waitUntil(async () => (await fx.inspector.children(dir)) === null, 'the directory removed', 15_000);
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 0, 'no watch left');
    for (const backend of backends) expect(backend.client.session.watcherCount()).toBe(0);
  }, 90_000);
});
