import { setTimeout as sleep } from 'node:timers/promises';

import { LeaderElection, type LeadershipChange, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';
import { runForTeeth } from '../support/run-for-teeth';

/**
 * Leader election under churn. Four candidates, each on its own session through its
 * own proxy. At random: a connection dropped; a reply cut after the server acted (the
 * create, the children read, the watch, the delete); a silent link then a reset; a black hole
 * longer than the session, of the leader every fifth fault (the server expires the session,
 * the candidate must find out by itself); a
 * candidate stopping (at whatever step its campaign stands) and starting again, sometimes
 * before its stop has finished.
 *
 * What each candidate's listener was told is the record. Checked: when one is told it
 * leads, no other candidate's last word is "leading" (two leaders); each candidate's changes
 * alternate, starting with `true`; a candidate told it leads, and still leading after
 * ZooKeeper's listing is read, has the first node of the leader lock. At the end, with the
 * faults healed, exactly one leads, and after stop() nothing is left in ZooKeeper.
 */

const SEQ = (node: string): number => Number(node.slice(-10));

interface Candidate {
  readonly identity: string;
  readonly backend: ZkLockBackend;
  readonly proxy: TcpProxy;
  readonly election: LeaderElection;
  readonly changes: LeadershipChange[];
}

describe('leader election under churn', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];
  beforeAll(async () => (fx = await LockFixture.create('leader-churn')));
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('never two candidates told they lead; the leader holds the first node; one leader at the end; nothing left', async () => {
    const SESSION_MS = 3000;
    const group = 'churn';
    const candidates: Candidate[] = [];
    const violations: string[] = [];
    const checks: Promise<void>[] = [];
    const tally = { terms: 0, checkedInZk: 0, monitored: 0, restarts: 0, faults: 0, leaderPartitions: 0 };
    let dir = '';

    const headOfQueue = async (): Promise<string | null> => {
      const nodes = ((await fx.inspector.children(dir)) ?? []).sort((a, b) => SEQ(a) - SEQ(b));
      return nodes.length ? fx.inspector.data(`${dir}/${nodes[0]}`) : null;
    };

    for (let i = 0; i < 4; i++) {
      const proxy = new TcpProxy(zkPort());
      await proxy.start();
      proxies.push(proxy);
      const identity = `cand-${i}`;
      const backend = await fx.backend({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: SESSION_MS,
        identity,
      });
      const election = new LeaderElection(backend, group, { retryDelayMs: 20 });
      const candidate: Candidate = { identity, backend, proxy, election, changes: [] };
      election.onChange((change) => {
        candidate.changes.push(change);
        if (!change.leading) return;
        tally.terms++;
        // Judged on what the listeners were told, before any getter here can change it.
        for (const other of candidates)
          if (other !== candidate && other.changes.at(-1)?.leading)
            violations.push(`${identity} told it leads while ${other.identity} was last told it leads`);
        checks.push(
          (async () => {
            await Promise.resolve();
            const head = await headOfQueue();
            if (!election.isLeader) return;
            tally.checkedInZk++;
            if (head !== identity) violations.push(`${identity} leads but ZooKeeper's first node is ${head}'s`);
          })(),
        );
      });
      candidates.push(candidate);
    }
    dir = candidates[0].backend.pathOf(`leader:${group}`);
    for (const c of candidates) c.election.start();

    let running = true;
    const cutOps = [ZK_OP.create, ZK_OP.getChildren2, ZK_OP.getData, ZK_OP.delete];
    const chaos = async (): Promise<void> => {
      while (running) {
        await sleep(100 + Math.random() * 300);
        if (!running) break;
        tally.faults++;
        // Faults aim at the leader more often than not: that is where they matter.
        const leader = candidates.find((c) => c.changes.at(-1)?.leading);
        // Every fifth fault is a black hole longer than the session, of the leader when there is one.
        const r = tally.faults % 5 === 0 ? 0.7 : Math.random();
        const target =
          leader && (Math.random() < 0.6 || (r >= 0.65 && r < 0.75))
            ? leader
            : candidates[Math.floor(Math.random() * candidates.length)];
        if (r < 0.3) target.proxy.drop();
        else if (r < 0.5) void target.proxy.cutAfter(cutOps[Math.floor(Math.random() * cutOps.length)]);
        else if (r < 0.65) {
          // A silent link, then a reset (bytes lost in a black hole end the connection).
          target.proxy.blackhole();
          await sleep(100 + Math.random() * 600);
          target.proxy.drop();
          target.proxy.heal();
        } else if (r < 0.75) {
          if (target === leader) tally.leaderPartitions++;
          target.proxy.blackhole();
          await sleep(SESSION_MS + 700);
          target.proxy.drop();
          target.proxy.heal();
        } else {
          tally.restarts++;
          const stopping = target.election.stop();
          if (Math.random() < 0.5) await stopping;
          else await sleep(Math.random() * 10);
          target.election.start();
          await stopping;
        }
      }
    };

    // Between changes too: whoever was last told it leads, and still leads after the read,
    // must have the first node in ZooKeeper (a leader never told of its loss fails this).
    const monitor = async (): Promise<void> => {
      while (running) {
        await sleep(50);
        const told = candidates.filter((c) => c.changes.at(-1)?.leading);
        if (told.length > 1) violations.push(`told they lead at once: ${told.map((c) => c.identity).join(', ')}`);
        if (told.length === 0) continue;
        const head = await headOfQueue();
        for (const c of told) {
          if (!c.election.isLeader) continue;
          tally.monitored++;
          if (head !== c.identity) violations.push(`${c.identity} leads but ZooKeeper's first node is ${head}'s`);
        }
      }
    };
    const chaosDone = chaos();
    const monitorDone = monitor();
    await runForTeeth(
      25_000,
      () => tally.terms >= 4 && tally.leaderPartitions >= 2 && tally.checkedInZk > 5 && tally.monitored > 100,
    );
    running = false;
    await Promise.all([chaosDone, monitorDone]);
    for (const c of candidates) c.proxy.heal();
    await Promise.all(checks);
    expect(violations).toEqual([]);
    for (const c of candidates)
      expect({ who: c.identity, alternates: c.changes.every((x, i) => x.leading === (i % 2 === 0)) }).toEqual({
        who: c.identity,
        alternates: true,
      });
    expect(tally.terms).toBeGreaterThanOrEqual(4);
    expect(tally.leaderPartitions).toBeGreaterThanOrEqual(2);
    expect(tally.checkedInZk).toBeGreaterThan(5);
    expect(tally.monitored).toBeGreaterThan(100);

    // Liveness: healed, exactly one leads, and its listeners (and only its) say so.
    await waitUntil(() => candidates.filter((c) => c.election.isLeader).length === 1, 'one leader', 20_000);
    const leader = candidates.find((c) => c.election.isLeader)!;
    expect(candidates.filter((c) => c.changes.at(-1)?.leading).map((c) => c.identity)).toEqual([leader.identity]);
    expect(await headOfQueue()).toBe(leader.identity);
    await waitUntil(
      async () => ((await fx.inspector.children(dir)) ?? []).length === 4,
      'every candidate queued once',
      20_000,
    );

    for (const c of candidates) await c.election.stop();
    await waitUntil(
      async () => (await fx.inspector.children(dir)) === null,
      'the leader lock directory removed',
      15_000,
    );
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 0, 'no watch left');
    for (const c of candidates) expect(c.backend.client.session.watcherCount()).toBe(0);
    expect(candidates.filter((c) => c.changes.at(-1)?.leading)).toEqual([]);
  }, 120_000);
});
