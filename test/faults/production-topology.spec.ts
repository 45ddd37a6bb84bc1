import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockLostError, ZkLockBackend, ZkLockError, type ZkLockHandle } from '../../lib/index';
import { overlaps, tokenDrops, type Section } from '../support/grant-intervals.checks';
import { nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { uniqueRoot } from '../support/zk-test-env';
import { ephemeralsUnder, waitQuorumJoined } from '../support/zookeeper/ensemble.probe';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { ZkEnsemble } from '../support/zookeeper/zk-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

// As test/faults/ensemble.spec.ts: tickTime 300 ms lets sessions last up to 6 s, room for
// an election and a JVM restart without every client losing its session.
const TICK_MS = 300;
const SESSION_MS = 6000;
const LOCK_NODE = /__r?lock__\d{10}$/;

interface WorkerEvent {
  event: string;
  [field: string]: unknown;
}
const eventsOf = (w: WorkerProcess): WorkerEvent[] => w.lines.map((line) => JSON.parse(line) as WorkerEvent);
const sectionsOf = (w: WorkerProcess, holder: string): Array<Section & { wrote: boolean }> =>
  eventsOf(w)
    .filter((e) => e.event === 'grant')
    .map((e) => ({
      holder,
      token: BigInt(e.token as string),
      start: BigInt(e.start as string),
      end: BigInt(e.end as string),
      wrote: e.wrote as boolean,
    }));
/** Failures by phase and error name, e.g. `{ "acquire LockTimeoutError": 1 }`. */
const failuresOf = (w: WorkerProcess): Record<string, number> =>
  eventsOf(w)
    .filter((e) => e.event === 'fail')
    .reduce<Record<string, number>>(
      (n, e) => ({ ...n, [`${e.phase} ${e.error}`]: (n[`${e.phase} ${e.error}`] ?? 0) + 1 }),
      {},
    );
const ms = (from: number): number => Math.round(performance.now() - from);

describe('a production topology: three servers, clients on all of them', () => {
  let ensemble: ZkEnsemble;
  let dir: string;
  const workers: WorkerProcess[] = [];
  const clients: ZkLockBackend[] = [];
  beforeAll(async () => {
    ensemble = await ZkEnsemble.start(3, TICK_MS);
    dir = mkdtempSync(join(tmpdir(), 'zk-lock-topology-'));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    await Promise.all(clients.map((c) => c.close()));
    await ensemble?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /** Reads ZooKeeper's own state through a short-lived inspector (closed even on failure). */
  async function inspect<T>(fn: (inspector: ZkInspector) => Promise<T>): Promise<T> {
    const inspector = await ZkInspector.connect(ensemble.connectionString);
    try {
      return await fn(inspector);
    } finally {
      await inspector.close();
    }
  }

  it('rolling restart (kill -9, restart, rejoin, next): no overlap, no lost count, rising tokens, progress after, nothing left', async () => {
    const rootPath = uniqueRoot('topology-rolling');
    const counter = join(dir, 'counter');
    writeFileSync(counter, '0 -');
    const args = {
      connectionString: ensemble.connectionString,
      rootPath,
      name: 'counter',
      sessionTimeoutMs: SESSION_MS,
      counter,
      acquireTimeoutMs: 20_000,
    };
    const ws = [1, 2, 3].map(() => WorkerProcess.spawn('fenced-counter.worker.ts', args));
    workers.push(...ws);
    const sections = () => ws.flatMap((w, i) => sectionsOf(w, `p${i + 1}`));
    /** A wait on the workers' progress, that names a worker which died meanwhile. */
    const progress = (check: () => boolean) => () => {
      const dead = ws.find((w) => !w.running);
      if (dead) throw new Error(`a worker exited: ${JSON.stringify(eventsOf(dead).at(-1))} ${dead.errors}`);
      return check();
    };
    await waitUntil(
      progress(() => ws.every((w) => sectionsOf(w, '').length > 0)),
      'every process to be granted the lock',
      30_000,
    );

    // Followers first, the leader last, as a production rolling restart goes: one election.
    const leader = await ensemble.leader();
    const restarts: string[] = [];
    for (const i of [...[0, 1, 2].filter((s) => s !== leader), leader]) {
      const before = sections().length;
      const killedAt = performance.now();
      const killedAtHr = process.hrtime.bigint();
      await ensemble.kill(i);
      // Two of three still form a quorum: every process goes on being granted meanwhile.
      await waitUntil(
        progress(() => ws.every((w) => sectionsOf(w, '').some((s) => s.start > killedAtHr))),
        `every process to be granted while server ${i + 1} is down`,
        30_000,
      );
      await ensemble.restart(i);
      await waitQuorumJoined(ensemble);
      restarts.push(
        `server ${i + 1}${i === leader ? ' (leader)' : ''} down ${ms(killedAt)} ms, ${sections().length - before} grants meanwhile`,
      );
    }
    const restartedAt = process.hrtime.bigint();
    await waitUntil(
      progress(() => ws.every((w) => sectionsOf(w, '').some((s) => s.start > restartedAt))),
      'every process to be granted again after the last restart',
      30_000,
    );

    for (const w of ws) w.signal('SIGTERM');
    await waitUntil(() => ws.every((w) => !w.running), 'every process to close its client and exit', 20_000);
    for (const w of ws)
      expect({ exit: await w.exited, errors: w.errors }).toEqual({ exit: { code: 0, signal: null }, errors: '' });

    const all = sections();
    const closed = ws.map((w) => eventsOf(w).find((e) => e.event === 'closed')!);
    console.log(
      [
        'rolling restart:',
        ...restarts.map((r) => `  ${r}`),
        ...ws.map((w, i) => {
          const own = sectionsOf(w, '');
          const after = own.filter((s) => s.start > restartedAt).length;
          const cuts = eventsOf(w).filter((e) => e.event === 'disconnected').length;
          return `  p${i + 1}: ${own.length} grants (${after} after the restarts, ${own.filter((s) => !s.wrote).length} lost inside), ${cuts} disconnects, failed: ${JSON.stringify(failuresOf(w))}`;
        }),
      ].join('\n'),
    );

    expect(overlaps(all)).toEqual([]);
    expect(tokenDrops(all)).toEqual([]);
    expect(ws.flatMap((w) => eventsOf(w).filter((e) => e.event === 'fenced' || e.event === 'torn'))).toEqual([]);
    const writes = all.filter((s) => s.wrote).length;
    expect(closed.reduce((n, c) => n + (c.writes as number), 0)).toBe(writes);
    expect(readFileSync(counter, 'utf8').split(' ')[0]).toBe(String(writes));
    for (const w of ws) expect(sectionsOf(w, '').filter((s) => s.start > restartedAt).length).toBeGreaterThan(0);
    // The leader's death cuts every client off (followers drop theirs until a new leader
    // is elected), so each process really had to move to another server.
    for (const w of ws) expect(eventsOf(w).filter((e) => e.event === 'disconnected').length).toBeGreaterThan(0);

    // ZooKeeper's own state: no lock node, no ephemeral under the root, none of the
    // workers' sessions alive (closed ones at once; any abandoned during a restart once
    // the server has expired it).
    const sessions = ws.flatMap((w) =>
      eventsOf(w)
        .filter((e) => e.event === 'session')
        .map((e) => sessionIdOf(e.id as string)),
    );
    const leftover = async () => {
      const port = ensemble.servers[await ensemble.leader()].clientPort;
      const live = await liveSessions(port);
      return {
        lockNodes: (await inspect((inspector) => inspector.tree(rootPath))).filter((path) => LOCK_NODE.test(path)),
        ephemerals: await ephemeralsUnder(port, rootPath),
        sessions: sessions.filter((s) => live.has(s)).map((s) => s.toString(16)),
      };
    };
    const empty = { lockNodes: [], ephemerals: [], sessions: [] };
    await waitUntil(
      async () => JSON.stringify(await leftover()) === JSON.stringify(empty),
      'no node or session of the workers left',
      3 * SESSION_MS,
    );
    expect(await leftover()).toEqual(empty);
    await inspect((inspector) => inspector.removeTree(rootPath));
  }, 90_000);

  it('quorum lost past the session timeout: the holder aborts, the same client takes the lock again, the waiter never beside it', async () => {
    const rootPath = uniqueRoot('topology-quorum');
    const connect = (identity: string) =>
      ZkLockBackend.connect({
        connectionString: ensemble.connectionString,
        rootPath,
        sessionTimeoutMs: SESSION_MS,
        emptyDirectoryGraceMs: 0,
        identity,
      });
    const holder = await connect('holder');
    clients.push(holder);
    const waiter = await connect('waiter');
    clients.push(waiter);
    const holds: Array<Section & { lock: ZkLockHandle }> = [];
    /** Holds `lock` for a moment, as a section on the clock of this process. */
    const hold = async (who: string, lock: ZkLockHandle): Promise<void> => {
      const start = process.hrtime.bigint();
      await sleep(200);
      holds.push({ holder: who, token: lock.fencingToken, start, end: process.hrtime.bigint(), lock });
      await lock.release();
    };

    const held = await holder.acquire('job');
    let abortedAt = 0;
    held.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    const waiting = waiter.acquire('job', { timeoutMs: 60_000 }).then(
      async (lock) => {
        const grantedAt = performance.now();
        await hold('waiter', lock);
        return { lock, grantedAt };
      },
      (error: unknown) => ({ error }),
    );
    await waitUntil(async () => (await holder.contenders('job')).length === 2, 'the waiter queues behind the holder');
    const firstSession = holder.client.session.id;

    // Two of three down: the last one has no quorum, serves no client, expires no session.
    const leader = await ensemble.leader();
    const down = [leader, (leader + 1) % 3];
    const survivor = [0, 1, 2].find((i) => !down.includes(i))!;
    const lostAt = performance.now();
    await Promise.all(down.map((i) => ensemble.kill(i)));
    await waitUntil(() => held.signal.aborted, 'the holder to be told its lock is lost', 3 * SESSION_MS);
    const abortMs = Math.round(abortedAt - lostAt);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    // Told, it stops and releases: a revived session would otherwise keep its node (its work
    // might still run) and its own next acquire would queue behind it.
    void held.release();
    await sleep(Math.max(0, lostAt + SESSION_MS + 1000 - performance.now())); // down past the session timeout
    expect(holds).toEqual([]); // nobody was granted without a quorum
    expect(await ensemble.servers[survivor].mode()).toBeUndefined(); // up, but serving no client

    const restartAt = performance.now();
    await Promise.all(down.map((i) => ensemble.restart(i)));
    await waitQuorumJoined(ensemble);
    const downMs = ms(lostAt);
    const recoveredAt = performance.now();

    const again = await holder.acquire('job', { timeoutMs: 60_000 });
    const reacquireMs = ms(recoveredAt);
    // ZooKeeper holds the holder's new node, first in line; its old one is gone (released,
    // or with its old session); any other node is the waiter's, queued behind.
    const nodes = await inspect(async (inspector) => {
      const dir = holder.pathOf('job');
      const children = (await inspector.children(dir)) ?? [];
      return Promise.all(children.map(async (node) => ({ node, identity: await inspector.data(`${dir}/${node}`) })));
    });
    const bySequence = [...nodes].sort((a, b) => Number(a.node.slice(-10)) - Number(b.node.slice(-10)));
    expect(bySequence[0]).toEqual({ node: nodeOf(again), identity: 'holder' });
    expect(nodes.filter((n) => n.identity === 'holder').map((n) => n.node)).toEqual([nodeOf(again)]);
    expect(nodes.filter((n) => n.identity !== 'holder').every((n) => n.identity === 'waiter')).toBe(true);
    expect(again.fencingToken).toBeGreaterThan(held.fencingToken);
    await hold('holder', again);

    const outcome = await waiting;
    console.log(
      `quorum loss: abort ${abortMs} ms after losing 2 of 3 servers, servers down ${downMs} ms (restart to rejoined ${Math.round(recoveredAt - restartAt)} ms), ` +
        `same client re-acquired ${reacquireMs} ms after recovery (session ${firstSession} -> ${holder.client.session.id}), waiter: ` +
        ('lock' in outcome
          ? `granted ${Math.round(outcome.grantedAt - restartAt)} ms after the restart began`
          : `failed with ${(outcome.error as Error).name}`),
    );
    if ('lock' in outcome) {
      // After the holder was told and the servers were restarted; possibly before all three
      // rejoined (`recoveredAt`): two of them are a quorum and grant already.
      expect(outcome.grantedAt).toBeGreaterThan(Math.max(abortedAt, restartAt));
      expect(outcome.lock.fencingToken).toBeGreaterThan(held.fencingToken);
    } else {
      expect(outcome.error).toBeInstanceOf(ZkLockError);
    }
    expect(overlaps(holds)).toEqual([]);
    expect(tokenDrops(holds)).toEqual([]);

    await Promise.all([holder.close(), waiter.close()]);
    expect((await inspect((inspector) => inspector.tree(rootPath))).filter((path) => LOCK_NODE.test(path))).toEqual([]);
    expect(await ephemeralsUnder(ensemble.servers[await ensemble.leader()].clientPort, rootPath)).toEqual([]);
    await inspect((inspector) => inspector.removeTree(rootPath));
  }, 90_000);
});
