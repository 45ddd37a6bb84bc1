import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

import { Partitioner, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { countsOf, movedParts, PartitionChecker } from '../support/partition-checker';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;
const PARTS = 12;
/** How long each revoked part's drain takes: a successor granted before it ends would show. */
const DRAIN_MS = 300;

describe('Partitioner on ZooKeeper', () => {
  let fx: LockFixture;
  const started: Partitioner[] = [];
  const clients = new Map<string, ZkLockBackend>();
  beforeAll(async () => {
    fx = await LockFixture.create('partitioner');
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((p) => p.stop()));
  });
  afterAll(() => fx.cleanup());

  /** A member on its own client, draining each revoked part for `DRAIN_MS` (recorded as `drained`). */
  async function member(
    checker: PartitionChecker,
    group: string,
    id: string,
    options: { settleMs?: number; backend?: ZkLockBackend } = {},
  ): Promise<Partitioner<number>> {
    const backend = options.backend ?? (await fx.backend({ identity: `client-${id}` }));
    clients.set(id, backend);
    const partitioner: Partitioner<number> = new Partitioner(backend, group, {
      partitions: PARTS,
      memberId: id,
      settleMs: options.settleMs ?? 0,
      onRevoked: async (parts) => {
        await sleep(DRAIN_MS);
        const at = process.hrtime.bigint();
        checker.add(...parts.map((part) => ({ member: id, at, kind: 'drained' as const, part: String(part) })));
      },
    });
    checker.watch(id, partitioner);
    started.push(partitioner);
    await partitioner.start();
    return partitioner;
  }

  const settledOn = (checker: PartitionChecker, members: string[], what: string): Promise<void> =>
    waitUntil(() => {
      const owners = checker.owners();
      const counts = countsOf(owners, members);
      return owners.size === PARTS && Math.max(...counts) - Math.min(...counts) <= 1;
    }, what);

  /** Each part's holder in ZooKeeper's own state: the identity in the one node of its lock directory. */
  async function holdersInZooKeeper(backend: ZkLockBackend, group: string): Promise<Map<string, string>> {
    await fx.releasesConfirmed();
    const holders = new Map<string, string>();
    for (let part = 0; part < PARTS; part++) {
      const dir = backend.pathOf(`partition:${group}/${part}`);
      const nodes = (await fx.inspector.children(dir)) ?? [];
      if (nodes.length !== 1) continue; // moving: compared only once settled
      holders.set(String(part), (await fx.inspector.data(`${dir}/${nodes[0]}`))!.replace('client-', ''));
    }
    return holders;
  }

  it('shares the parts, balanced, each held in ZooKeeper by its owner alone; joins and leaves move only what they must', async () => {
    const checker = new PartitionChecker();
    const group = 'orders';
    const a = await member(checker, group, 'a');
    await waitUntil(() => a.owned().length === PARTS, 'a alone owns every part');
    const b = await member(checker, group, 'b');
    await settledOn(checker, ['a', 'b'], 'a and b share');
    await member(checker, group, 'c');
    await settledOn(checker, ['a', 'b', 'c'], 'a, b and c share');
    const three = checker.owners();
    expect(countsOf(three, ['a', 'b', 'c'])).toEqual([4, 4, 4]);
    await waitUntil(
      async () => movedParts(three, await holdersInZooKeeper(clients.get('a')!, group)).length === 0,
      'ZooKeeper agrees',
    );

    // A join: only what the newcomer takes moves, at most ⌈12/4⌉.
    await member(checker, group, 'd');
    await settledOn(checker, ['a', 'b', 'c', 'd'], 'four share');
    const four = checker.owners();
    const joined = movedParts(three, four);
    expect(joined.every((part) => four.get(part) === 'd')).toBe(true);
    expect(joined.length).toBe(3);

    // A graceful leave: only the leaver's parts move.
    await b.stop();
    await settledOn(checker, ['a', 'c', 'd'], 'three share again');
    const left = checker.owners();
    expect(movedParts(four, left).every((part) => four.get(part) === 'b')).toBe(true);
    expect(countsOf(left, ['a', 'c', 'd'])).toEqual([4, 4, 4]);
    expect(b.owned()).toEqual([]);
    expect(a.members().map(({ id }) => id)).toEqual(['a', 'c', 'd']);
    expect(checker.violations({ drains: true })).toEqual([]);
    expect(checker.events.filter((e) => e.kind === 'lost')).toEqual([]);
  });

  it('a member cut off by a silent proxy is told lost before another member is assigned any of its parts', async () => {
    const checker = new PartitionChecker();
    const group = 'cut-off';
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const cutBackend = await fx.backend({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: SESSION_MS,
        identity: 'client-x',
      });
      const x = await member(checker, group, 'x', { backend: cutBackend });
      await waitUntil(() => x.owned().length === PARTS, 'x owns every part');
      await member(checker, group, 'y');
      await member(checker, group, 'z');
      await settledOn(checker, ['x', 'y', 'z'], 'three share');
      const before = checker.owners();
      const xParts = [...before].filter(([, owner]) => owner === 'x').map(([part]) => part);

      proxy.blackhole(); // no FIN, no RST: x hears nothing, its session expires on the server
      await waitUntil(
        () => xParts.every((part) => ['y', 'z'].includes(checker.owners().get(part) ?? '')),
        "y and z own x's parts",
        6 * SESSION_MS,
      );
      const lost = checker.events.filter((e) => e.member === 'x' && e.kind === 'lost').map((e) => e.part);
      expect(lost.sort()).toEqual([...xParts].sort());
      expect(x.owned()).toEqual([]);
      // Never two owners: each part's "lost" by x comes before its "assigned" to y or z.
      expect(checker.violations({ drains: true })).toEqual([]);
      // Only x's parts moved; y and z share all 12 within 1.
      const after = checker.owners();
      expect(movedParts(before, after).every((part) => before.get(part) === 'x')).toBe(true);
      expect(countsOf(after, ['y', 'z'])).toEqual([6, 6]);

      proxy.heal();
      await x.stop(); // before its proxy goes
    } finally {
      await proxy.stop();
    }
  });

  it('a brief disconnect releases nothing: the session survives, every part stays with its owner, no event is told', async () => {
    const checker = new PartitionChecker();
    const group = 'blip';
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const blipBackend = await fx.backend({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: SESSION_MS,
        identity: 'client-x',
      });
      const x = await member(checker, group, 'x', { backend: blipBackend });
      await member(checker, group, 'y');
      await settledOn(checker, ['x', 'y'], 'two share');
      const before = checker.owners();
      const inZooKeeper = await holdersInZooKeeper(blipBackend, group);
      const nodesBefore = await Promise.all(
        [...Array(PARTS).keys()].map((part) => fx.inspector.children(blipBackend.pathOf(`partition:${group}/${part}`))),
      );
      const events = checker.events.length;
      const sessionId = blipBackend.client.session.id;

      const disconnected = once(blipBackend.client, 'disconnected');
      const reconnected = once(blipBackend.client, 'connected');
      proxy.drop(); // the connection reset: the client reconnects at once, in the same session
      await Promise.all([disconnected, reconnected]);
      await sleep(SESSION_MS / 2); // time for any event a disconnect would (wrongly) cause

      expect(blipBackend.client.session.id).toBe(sessionId);
      expect(checker.events.slice(events)).toEqual([]);
      expect(checker.owners()).toEqual(before);
      expect(x.owned()).toEqual(
        [...before]
          .filter(([, owner]) => owner === 'x')
          .map(([part]) => Number(part))
          .sort((a, b) => a - b),
      );
      // ZooKeeper's own state: the same holders, on the same nodes.
      expect(await holdersInZooKeeper(blipBackend, group)).toEqual(inZooKeeper);
      const nodesAfter = await Promise.all(
        [...Array(PARTS).keys()].map((part) => fx.inspector.children(blipBackend.pathOf(`partition:${group}/${part}`))),
      );
      expect(nodesAfter).toEqual(nodesBefore);
      await x.stop(); // before its proxy goes
    } finally {
      await proxy.stop();
    }
  });

  it('settleMs: a member that restarts within it gets its own parts back, and nobody else moves a part', async () => {
    const checker = new PartitionChecker();
    const group = 'rolling';
    const settleMs = 3000;
    await member(checker, group, 'a', { settleMs });
    const b = await member(checker, group, 'b', { settleMs });
    await member(checker, group, 'c', { settleMs });
    await settledOn(checker, ['a', 'b', 'c'], 'three share');
    const before = checker.owners();
    const bParts = [...before].filter(([, owner]) => owner === 'b').map(([part]) => part);

    await b.stop();
    const restarted = await member(checker, group, 'b', { settleMs });
    await waitUntil(() => restarted.owned().length === bParts.length, 'b owns its parts again');
    expect(restarted.owned().map(String)).toEqual(bParts.sort((x, y) => Number(x) - Number(y)));
    // Nobody but b was assigned anything after the restart began.
    const restartAt = checker.events.find((e) => e.member === 'b' && e.kind === 'revoked')!.at;
    const later = checker.events.filter((e) => e.at >= restartAt && e.kind === 'assigned');
    expect(later.every((e) => e.member === 'b')).toBe(true);
    expect(movedParts(before, checker.owners())).toEqual([]);
    expect(checker.violations({ drains: true })).toEqual([]);
  });
});
