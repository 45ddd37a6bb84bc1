import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend, ZkLockHandle, ZkLockOptions } from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/zookeeper/lease';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';
import { runForTeeth } from '../support/run-for-teeth';

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

/**
 * Six racing clients: four direct, and two through proxies (also pushed to `proxies`, for
 * cleanup) whose connections are dropped and whose replies are cut, so that directory
 * creates, reads and node creates are retried after a reconnect.
 */
async function racingBackends(
  fx: LockFixture,
  proxies: TcpProxy[],
  options: Partial<ZkLockOptions> = {},
): Promise<{ backends: ZkLockBackend[]; proxied: TcpProxy[] }> {
  const backends: ZkLockBackend[] = [];
  const proxied: TcpProxy[] = [];
  for (let i = 0; i < 4; i++) backends.push(await fx.backend({ ...options, sessionTimeoutMs: 4000 }));
  for (let i = 0; i < 2; i++) {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    proxies.push(proxy);
    proxied.push(proxy);
    backends.push(await fx.backend({ ...options, connectionString: proxy.connectionString, sessionTimeoutMs: 4000 }));
  }
  return { backends, proxied };
}

describe('lease counts that disagree, racing for a directory that comes and goes', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];
  beforeAll(async () => (fx = await LockFixture.create('lease-marker-race')));
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('a grant is only ever made under the count its directory stores, and never beyond it', async () => {
    const { backends, proxied } = await racingBackends(fx, proxies);
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
        else if (kind === 'LockTimeoutError' || kind === 'LockUnavailableError')
          tally.timeouts++; // or a drop meanwhile
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
    await runForTeeth(
      15_000,
      () => grantsByCount.size === 3 && tally.countChanges > 20 && tally.mismatches > 50 && tally.checked > 100,
    );
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

const LOCK_NODE = /^[0-9a-f]{32}__(r?lock)__\d{10}$/;
const marker = (maxLeases: number): string => JSON.stringify({ kind: 'nestjs-zk-lock/lease', maxLeases });

/** What one acquire asked for: a lock (write or read), or a lease of a count. */
type Want = { readonly lock: 'write' | 'read' } | { readonly lease: number };
type Grant = { readonly want: Want; readonly handle: ZkLockHandle | ZkLeaseHandle };

/** The kind and count a grant was made under: `lock`, or `lease/<count>`. */
const kindOf = (want: Want): string => ('lease' in want ? `lease/${want.lease}` : 'lock');

/**
 * Locks (write and read) and leases of counts 1–3, asked for at random by many clients on
 * one name, so the name goes on changing kind and count whenever it falls idle, with the
 * directory kept (`removeEmptyDirectories: false`) or removed with the release. Two clients
 * go through proxies that drop connections and cut replies, so the changes' transactions
 * and the withdrawals are retried after a reconnect.
 *
 * At every grant, while it is held: every grant still trusted (on any client) is of one
 * kind and one count, a write lock alone, no more leases than the count; ZooKeeper's
 * directory (read independently) stores that kind and count (no data for a lock, the
 * marker for a lease); every trusted grant's node is in it, named as its kind; a lease's
 * node among the first `maxLeases` lease nodes. Nodes of the other kind may be listed for
 * a moment (a lock call queues before it reads the directory's data, which costs no round
 * trip; a caller that finds another kind withdraws at once), but never one of a grant.
 */
describe.each<[string, Partial<ZkLockOptions>]>([
  ['directories kept', { removeEmptyDirectories: false }],
  ['directories removed with the release', { emptyDirectoryGraceMs: 0 }],
])('kinds and counts changing on an idle name, racing (%s)', (_, options) => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];
  beforeAll(async () => (fx = await LockFixture.create('kind-race')));
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('never two kinds or two counts at once, and the directory always stores the one granted', async () => {
    const { backends, proxied } = await racingBackends(fx, proxies, options);
    const name = 'changing';
    const dir = backends[0].pathOf(name);
    const live = new Set<Grant>();
    const violations: string[] = [];
    const failures: string[] = [];
    const grants = new Map<string, number>();
    const tally = { refusals: 0, timeouts: 0, changes: 0, checked: 0 };
    let lastSeen: string | null = null;

    const check = async (grant: Grant): Promise<void> => {
      const kind = kindOf(grant.want);
      const trusted = [...live].filter((other) => other.handle.isHeld());
      if (!grant.handle.isHeld()) return;
      const others = trusted.filter((other) => kindOf(other.want) !== kind);
      if (others.length > 0)
        violations.push(`${kind} granted while ${others.map((o) => kindOf(o.want)).join(', ')} held`);
      if ('lease' in grant.want && trusted.length > grant.want.lease)
        violations.push(`${trusted.length} trusted grants of ${kind}`);
      if (
        'lock' in grant.want &&
        trusted.some((o) => 'lock' in o.want && o.want.lock === 'write') &&
        trusted.length > 1
      )
        violations.push(`a write lock held with ${trusted.length - 1} other locks`);
      const [data, children] = await Promise.all([fx.inspector.data(dir), fx.inspector.children(dir)]);
      if (!grant.handle.isHeld()) return;
      tally.checked++;
      const expected = 'lease' in grant.want ? marker(grant.want.lease) : '';
      if (data !== expected) violations.push(`${kind} granted in a directory storing ${JSON.stringify(data)}`);
      if (data !== lastSeen) tally.changes++;
      lastSeen = data;
      const listed = children ?? [];
      for (const other of trusted) {
        const leaf = other.handle.path.slice(other.handle.path.lastIndexOf('/') + 1);
        const named = 'lease' in other.want ? LEASE.test(leaf) : LOCK_NODE.test(leaf);
        // A grant released or lost since `trusted` was taken has left: only a present node must match.
        if (other.handle.isHeld() && !listed.includes(leaf)) violations.push(`${kind}: trusted ${leaf} not listed`);
        if (!named) violations.push(`${kindOf(other.want)} granted on node ${leaf}`);
      }
      if ('lease' in grant.want) {
        const leaf = grant.handle.path.slice(grant.handle.path.lastIndexOf('/') + 1);
        const queue = listed.filter((c) => LEASE.test(c)).sort((x, y) => seqOf(x) - seqOf(y));
        const index = queue.indexOf(leaf);
        if (index < 0 || index >= grant.want.lease) violations.push(`lease ${leaf} at ${index} in ${queue.join(', ')}`);
      }
    };

    const wants: Want[] = [{ lock: 'write' }, { lock: 'read' }, { lease: 1 }, { lease: 2 }, { lease: 3 }];
    const once = async (backend: ZkLockBackend): Promise<void> => {
      const want = wants[Math.floor(Math.random() * wants.length)];
      const timeoutMs = [0, 20, 300][Math.floor(Math.random() * 3)];
      await sleep(Math.random() * 3);
      let handle: ZkLockHandle | ZkLeaseHandle;
      try {
        handle =
          'lease' in want
            ? await backend.acquireLease(name, { maxLeases: want.lease, timeoutMs })
            : await backend.acquire(name, { mode: want.lock, timeoutMs });
      } catch (error) {
        const kind = (error as Error).name;
        if (kind === 'LeaseLimitMismatchError' || kind === 'LockKindMismatchError') tally.refusals++;
        else if (kind === 'LockTimeoutError' || kind === 'LockUnavailableError')
          tally.timeouts++; // or a drop meanwhile
        else failures.push(`${kind}: ${(error as Error).message}`);
        return;
      }
      const grant = { want, handle };
      grants.set(kindOf(want), (grants.get(kindOf(want)) ?? 0) + 1);
      live.add(grant);
      await check(grant);
      await sleep(Math.random() * 8);
      live.delete(grant);
      await handle.release();
    };
    let running = true;
    const rounds = async (): Promise<void> => {
      while (running) await Promise.all(backends.flatMap((backend) => [once(backend), once(backend)]));
    };
    const ops = [ZK_OP.create, ZK_OP.getData, ZK_OP.getChildren2, ZK_OP.delete, ZK_OP.multi];
    const chaos = async (): Promise<void> => {
      while (running) {
        await sleep(80 + Math.random() * 200);
        const proxy = proxied[Math.floor(Math.random() * proxied.length)];
        if (Math.random() < 0.5) proxy.drop();
        else void proxy.cutAfter(ops[Math.floor(Math.random() * ops.length)]);
      }
    };

    const racing = rounds();
    const chaosDone = chaos();
    await runForTeeth(
      12_000,
      () => grants.size === 4 && tally.changes > 20 && tally.refusals > 20 && tally.checked > 100,
    );
    running = false;
    await chaosDone;
    await racing;
    expect(failures).toEqual([]);
    expect(violations).toEqual([]);
    // The race did happen: grants of every kind and count, the name changing often, refusals.
    expect([...grants.keys()].sort()).toEqual(['lease/1', 'lease/2', 'lease/3', 'lock']);
    expect(tally.changes).toBeGreaterThan(20);
    expect(tally.refusals).toBeGreaterThan(20);
    expect(tally.checked).toBeGreaterThan(100);

    if (options.removeEmptyDirectories === false)
      await waitUntil(async () => (await fx.inspector.children(dir))?.length === 0, 'every node gone', 15_000);
    else await waitUntil(async () => (await fx.inspector.children(dir)) === null, 'the directory removed', 15_000);
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 0, 'no watch left');
    for (const backend of backends) expect(backend.client.session.watcherCount()).toBe(0);
  }, 90_000);
});
