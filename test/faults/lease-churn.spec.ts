import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend } from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/zookeeper/lease';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { runForTeeth } from '../support/run-for-teeth';

/**
 * The lease semaphore under churn, as handoff-churn.spec.ts does for locks.
 *
 * Several sessions (5 clients, 3 loops each), each client through its own proxy, run
 * acquire/hold/release loops on one semaphore; waiters give up mid-wait (short timeouts,
 * aborts at a random moment). Meanwhile, at random: a connection dropped; a request's reply
 * cut after the server acted (create, children read, data watch, grant signal, delete); a
 * silent link then a reset; a slow link (replies and notifications held, then delivered in
 * order). And every few seconds a partition longer than the session of a client that holds
 * a lease right then, which keeps holding and checking it: the server expires the session
 * (no forced close), and the holder must be told before anyone else gets its lease.
 *
 * (A black hole healed without a reset is not used: it discards bytes in the middle of a TCP
 * stream and delivers what follows, which TCP never does, and a watch notification lost that
 * way is lost to any ZooKeeper client: a waiter then waits for nothing.)
 *
 * Every grant is checked (a) against every other grant still trusted in memory (never more
 * than maxLeases), (b) against ZooKeeper's own listing read independently: a grant still
 * trusted after the read must have its node there, among the first maxLeases (sequence
 * numbers only grow, so a read after the grant is as good as one at it), and (c) no node is
 * ever granted twice. A waiter that waits its full 30 s is a missed wake-up. Afterwards:
 * no node, no directory, no watch on ZooKeeper (`wchc`), no listener, no session left but
 * each client's current one.
 */

const SET_DATA = 5;
const LEASE = /^[0-9a-f]{32}__lease__(\d{10})$/;
const seqOf = (node: string): number => Number(LEASE.exec(node)![1]);
const leafOf = (lease: ZkLeaseHandle): string => lease.path.slice(lease.path.lastIndexOf('/') + 1);

describe('leases under churn', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    fx = await LockFixture.create('lease-churn');
  });
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it.each([2, 3])(
    'maxLeases %i: never more than maxLeases trusted grants, each among the first maxLeases nodes in ZooKeeper; no waiter stuck; nothing left',
    async (maxLeases) => {
      const SESSION_MS = 3000;
      const RUN_MS = 16_000;
      const backends: ZkLockBackend[] = [];
      const mine: TcpProxy[] = [];
      const sessionsSeen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const proxy = new TcpProxy(zkPort());
        await proxy.start();
        proxies.push(proxy);
        mine.push(proxy);
        const backend = await fx.backend({
          connectionString: proxy.connectionString,
          sessionTimeoutMs: SESSION_MS,
          identity: `c${i}`,
        });
        sessionsSeen.add(backend.client.session.id);
        backend.client.on('connected', (session: { id: string }) => sessionsSeen.add(session.id));
        backends.push(backend);
      }
      const name = `churn-${maxLeases}`;
      const dir = backends[0].pathOf(name);
      const live = new Set<ZkLeaseHandle>();
      const grantedNodes = new Set<string>();
      /** The client of each lease in `live`. */
      const holderOf = new Map<ZkLeaseHandle, ZkLockBackend>();
      /** Clients cut off right now by a partition longer than the session: their holders hold on. */
      const partitioned = new Set<ZkLockBackend>();
      /** The holders a partition aimed at, and how their hold ended. */
      const targets = new Map<ZkLeaseHandle, string>();
      const violations: string[] = [];
      const failures: string[] = [];
      const tally = {
        grants: 0,
        timeouts: 0,
        aborts: 0,
        lost: 0,
        checkedInZk: 0,
        rechecks: 0,
        peak: 0,
        faults: 0,
        partitions: 0,
      };
      let running = true;

      const check = async (lease: ZkLeaseHandle, first = true): Promise<void> => {
        const node = leafOf(lease);
        if (first && grantedNodes.has(node)) violations.push(`node ${node} granted twice`);
        grantedNodes.add(node);
        // (a) In memory, right at the grant: every grant still trusted, this one included.
        if (lease.isHeld()) {
          const trusted = [...live].filter((other) => other.isHeld());
          tally.peak = Math.max(tally.peak, trusted.length);
          if (trusted.length > maxLeases)
            violations.push(`${trusted.length} trusted grants at once: ${trusted.map(leafOf).join(', ')}`);
        }
        // (b) In ZooKeeper, read independently.
        const children = ((await fx.inspector.children(dir)) ?? []).filter((c) => LEASE.test(c));
        if (!lease.isHeld()) return; // lost meanwhile (told): nothing to hold it to
        tally.checkedInZk++;
        if (!first) tally.rechecks++;
        const queue = children.sort((x, y) => seqOf(x) - seqOf(y));
        const index = queue.indexOf(node);
        if (index < 0) violations.push(`trusted grant ${node} has no node in ZooKeeper`);
        else if (index >= maxLeases)
          violations.push(`trusted grant ${node} is number ${index + 1} in ZooKeeper's queue: ${queue.join(', ')}`);
      };

      const loop = async (backend: ZkLockBackend): Promise<void> => {
        while (running) {
          const r = Math.random();
          const timeoutMs = r < 0.3 ? 1 + Math.floor(Math.random() * 40) : 30_000;
          const controller = new AbortController();
          if (r >= 0.3 && r < 0.45) setTimeout(() => controller.abort(), Math.random() * 60);
          let lease: ZkLeaseHandle;
          const startedAt = performance.now();
          try {
            lease = await backend.acquireLease(name, { maxLeases, timeoutMs, signal: controller.signal });
          } catch (error) {
            const kind = (error as Error).name;
            // A short wait may also end in a connection drop of the churn: nobody could be asked then.
            if ((kind === 'LockTimeoutError' || kind === 'LockUnavailableError') && timeoutMs < 30_000)
              tally.timeouts++;
            else if (kind === 'LockAbortedError') tally.aborts++;
            else if (kind === 'LockTimeoutError') {
              const nodes = ((await fx.inspector.children(dir)) ?? []).sort((x, y) => seqOf(x) - seqOf(y));
              const owners = await Promise.all(
                nodes.slice(0, maxLeases + 2).map((n) => fx.inspector.data(`${dir}/${n}`)),
              );
              violations.push(
                `a patient waiter of ${backend.options.identity} (session ${backend.client.session.id}) waited ${Math.round(performance.now() - startedAt)} ms in vain; ` +
                  `queue now: ${nodes
                    .slice(0, maxLeases + 2)
                    .map((n, i) => `${n.slice(-4)}@${owners[i]}`)
                    .join(' ')} (${nodes.length}); ` +
                  `live: ${[...live].map((l) => `${leafOf(l).slice(-4)}@${holderOf.get(l)?.options.identity}:${l.isHeld()}`).join(' ')}; ` +
                  `sessions: ${backends.map((b) => `${b.options.identity}=${b.client.session.id}${b.client.session.isConnected ? '' : '(down)'}`).join(' ')}`,
              );
            } else failures.push(`${kind}: ${(error as Error).message}`);
            continue;
          }
          controller.abort(); // too late to matter: the grant stands
          tally.grants++;
          live.add(lease);
          holderOf.set(lease, backend);
          await check(lease);
          // Mostly short holds; some longer than the session, checked again and again while
          // trusted (a holder never told of its loss shows up here, once ZooKeeper dropped its node).
          const holdMs = Math.random() < 0.01 ? 500 + Math.random() * 1500 : Math.random() * 6;
          const until = performance.now() + holdMs;
          while (performance.now() < until || partitioned.has(backend)) {
            await sleep(Math.min(100, Math.max(0, until - performance.now())));
            if (!lease.isHeld()) break;
            await check(lease, false);
          }
          if (!lease.isHeld()) tally.lost++;
          if (targets.has(lease))
            targets.set(
              lease,
              lease.isHeld() ? `still trusted at ${partitioned.has(backend)}` : 'told it lost its lease',
            );
          live.delete(lease);
          holderOf.delete(lease);
          await lease.release();
        }
      };

      // Black holes may overlap (a short one and a partition): the proxy heals when the last ends.
      const holes = new Map<TcpProxy, number>();
      const blackhole = (proxy: TcpProxy): void => {
        holes.set(proxy, (holes.get(proxy) ?? 0) + 1);
        proxy.blackhole();
      };
      const heal = (proxy: TcpProxy): void => {
        const depth = (holes.get(proxy) ?? 1) - 1;
        holes.set(proxy, depth);
        if (depth === 0) proxy.heal();
      };
      const cutOps = [ZK_OP.create, ZK_OP.getChildren2, ZK_OP.getData, SET_DATA, ZK_OP.delete];
      const chaos = async (): Promise<void> => {
        while (running) {
          await sleep(100 + Math.random() * 250);
          if (!running) break;
          const i = Math.floor(Math.random() * mine.length);
          if (partitioned.has(backends[i])) continue; // a heal here would end the partition early
          const proxy = mine[i];
          const r = Math.random();
          tally.faults++;
          if (r < 0.5) proxy.drop();
          else if (r < 0.8) void proxy.cutAfter(cutOps[Math.floor(Math.random() * cutOps.length)]);
          else if (r < 0.9) {
            // A silent link, then a reset: bytes lost in a black hole cannot be followed by more
            // on the same connection (TCP would have retransmitted them), so it is dropped.
            blackhole(proxy);
            await sleep(100 + Math.random() * 500);
            proxy.drop();
            heal(proxy);
          } else {
            // A slow link: the server's replies and notifications arrive late, in order.
            proxy.holdReplies();
            await sleep(100 + Math.random() * 500);
            proxy.releaseReplies();
          }
        }
      };
      // A partition longer than the session, of a client that holds a lease right then, which
      // it keeps holding (and checking) while cut off: the server expires the session, and
      // the holder must have been told before anyone else is granted its lease.
      const partitions = async (): Promise<void> => {
        await sleep(1000);
        while (running) {
          const holder = [...live].find((lease) => lease.isHeld());
          if (!holder) {
            await sleep(20);
            continue;
          }
          const backend = holderOf.get(holder)!;
          const proxy = mine[backends.indexOf(backend)];
          partitioned.add(backend);
          targets.set(holder, 'cut off');
          tally.partitions++;
          blackhole(proxy);
          await sleep(SESSION_MS + 800);
          proxy.drop();
          heal(proxy);
          partitioned.delete(backend);
          await sleep(1000 + Math.random() * 1000);
        }
      };

      const loops = backends.flatMap((backend) => [loop(backend), loop(backend), loop(backend)]);
      const chaosDone = Promise.all([chaos(), partitions()]);
      await runForTeeth(
        RUN_MS,
        () =>
          tally.grants > 100 &&
          tally.checkedInZk > 100 &&
          tally.peak === maxLeases &&
          tally.timeouts + tally.aborts > 20 &&
          tally.partitions >= 2,
      );
      running = false;
      await chaosDone;
      for (const proxy of mine) proxy.heal();
      const giveUp = new AbortController();
      const finished = await Promise.race([
        Promise.allSettled(loops),
        sleep(45_000, undefined, { signal: giveUp.signal }).then(() => 'stuck' as const),
      ]);
      giveUp.abort();
      expect(finished).not.toBe('stuck');
      expect(
        (finished as PromiseSettledResult<void>[])
          .filter((r) => r.status === 'rejected')
          .map((r) => String((r as PromiseRejectedResult).reason)),
      ).toEqual([]);
      expect(failures).toEqual([]);
      expect([...new Set(violations)].slice(0, 10)).toEqual([]);
      expect(tally.grants).toBeGreaterThan(100);
      expect(tally.checkedInZk).toBeGreaterThan(100);
      expect(tally.peak).toBe(maxLeases); // the semaphore was full at times: the check had teeth
      expect(tally.timeouts + tally.aborts).toBeGreaterThan(20); // waiters gave up mid-wait
      expect(tally.partitions).toBeGreaterThanOrEqual(2);
      // Each partitioned holder was told it lost its lease.
      expect([...targets.values()]).toEqual([...targets.values()].map(() => 'told it lost its lease'));

      // ZooKeeper's own state: no node and no directory (dead sessions' nodes go with their expiry),
      await waitUntil(
        async () => (await fx.inspector.children(dir)) === null,
        'the semaphore directory removed',
        15_000,
      );
      // no watch (a watch left on a deleted node fires with its delete: none may stay),
      await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 0, 'no watch under the semaphore');
      for (const backend of backends) expect(backend.client.session.watcherCount()).toBe(0);
      // and no session but each client's current one.
      const current = new Set(backends.map((b) => sessionIdOf(b.client.session.id)));
      const stale = [...sessionsSeen].map(sessionIdOf).filter((id) => !current.has(id));
      await waitUntil(async () => {
        const alive = await liveSessions(zkPort());
        return stale.every((id) => !alive.has(id)) && [...current].every((id) => alive.has(id));
      }, 'only the current sessions alive');
    },
    120_000,
  );
});
