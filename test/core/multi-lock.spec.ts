import {
  InvalidLockListError,
  InvalidOptionError,
  LockAbortedError,
  LockTimeoutError,
  type MultiLockHandle,
  type ZkLockBackend,
  type ZkLockHandle,
} from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { TcpProxy, ZK_OP, type ProxiedRequest } from '../support/tcp-proxy';
import { waitFor } from '../support/wait-for';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

/** The lock nodes of each name (0 when its directory is gone too). */
const nodeCounts = (fx: LockFixture, names: string[]): Promise<number[]> =>
  Promise.all(names.map(async (name) => (await fx.nodes(name))?.length ?? 0));

/** The ZooKeeper nodes a granted multi-lock holds, one per name. */
const nodesOf = (group: MultiLockHandle): string[] => group.handles.map((handle) => nodeOf(handle as ZkLockHandle));

/** How the group's children reads travel: one multiRead (ZooKeeper 3.6 and later), or one read each (older servers). */
const READS = [
  {
    title: 'one multiRead (ZooKeeper 3.6+)',
    srvr: undefined, // the test server answers: 3.8
    readOps: [[ZK_OP.multiRead, undefined]],
    counts: { multi: 1, multiRead: 1 },
  },
  {
    title: 'one read each (a server before 3.6)',
    srvr: 'Zookeeper version: 3.5.10-c2a6ba5e7d4f3bd1d2c5a49dc6bfcf9bd1b0b1e9, built on 2022-05-30 08:39 UTC\n',
    readOps: ['a', 'b', 'c', 'd', 'e'].map((name) => [ZK_OP.getChildren2, name]),
    counts: { multi: 1, getChildren: 5 },
  },
] as const;

describe.each(READS)(
  'acquireAll on ZooKeeper: what it costs on the wire, the reads as $title',
  ({ srvr, readOps, counts }) => {
    let fx: LockFixture;
    let proxy: TcpProxy;
    let client: ZkLockBackend;
    const names = ['e', 'c', 'a', 'd', 'b'];

    beforeAll(async () => {
      fx = await LockFixture.create('multi-wire');
      proxy = new TcpProxy(zkPort());
      proxy.fourLetterReply = srvr;
      await proxy.start();
      // Held replies must never look like a silent server; directories stay (a hot lock set).
      client = await fx.backend({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: 10_000,
        emptyDirectoryGraceMs: 60_000,
      });
      const first = await client.acquireAll(names);
      await first.release();
      await first.releaseConfirmed; // the directories exist from now on, and its delete is answered
      await client.client.liveSession().readyToReadTogether(); // the server said its version
    });
    afterAll(async () => {
      proxy.releaseReplies();
      await fx.cleanup();
      await proxy.stop();
    });

    /** Requests on lock paths since `mark` (no pings, no liveness heartbeats), and the multis (only ours use them). */
    const lockRequests = (mark: number): ProxiedRequest[] =>
      proxy.requests
        .slice(mark)
        .filter((r) => r.op === ZK_OP.multi || r.op === ZK_OP.multiRead || r.path?.startsWith(`${fx.rootPath}/`));

    it('5 free locks cost one round trip and one write: one multi create, every read sent before any reply arrives', async () => {
      const before = client.client.counter.snapshot();
      const mark = proxy.requests.length;
      const expected = 1 + readOps.length;
      proxy.holdReplies(); // nothing ZooKeeper answers reaches the client until released
      let settled = false;
      const acquiring = client.acquireAll(names, { timeoutMs: 20_000 }).finally(() => (settled = true));
      try {
        await waitFor(() => lockRequests(mark).length === expected, {
          timeoutMs: 3000,
          what: () =>
            `${expected} requests sent while every reply is held (sent: ${JSON.stringify(lockRequests(mark))})`,
        });
        const sent = lockRequests(mark);
        // The creates of all five names are one transaction, and the reads go right behind it.
        expect(sent[0].op).toBe(ZK_OP.multi);
        expect(sent.filter((r) => r.op === ZK_OP.create)).toEqual([]);
        expect(sent.slice(1).map((r) => [r.op, r.path?.split('/').at(-1)])).toEqual(readOps);
        await waitFor(() => proxy.heldReplyBytes > 0, { what: 'the server to answer into the hold' });
        expect(settled).toBe(false);
      } finally {
        proxy.releaseReplies();
      }
      const group = await acquiring;
      // Granted from that one wave: nothing more was asked.
      expect(lockRequests(mark)).toHaveLength(expected);
      expect(countsSince(client, before)).toEqual(counts);
      expect(group.names).toEqual(['a', 'b', 'c', 'd', 'e']);
      for (const [i, name] of group.names.entries()) expect(await fx.nodes(name)).toEqual([nodesOf(group)[i]]);

      // The release is one transaction too: the five deletes in one multi.
      const releaseMark = proxy.requests.length;
      const releaseBefore = client.client.counter.snapshot();
      proxy.holdReplies();
      let released = false;
      let confirmed = false;
      const releasing = group.release().then(() => (released = true));
      void group.releaseConfirmed.then(() => (confirmed = true));
      try {
        await waitFor(() => lockRequests(releaseMark).length === 1, {
          timeoutMs: 3000,
          what: () =>
            `the multi delete sent while replies are held (sent: ${JSON.stringify(lockRequests(releaseMark))})`,
        });
        // The release answered once the multi was sent; the confirmation waits for ZooKeeper's reply.
        await waitFor(() => proxy.heldReplyBytes > 0, { what: 'the server to answer the multi into the hold' });
        expect({ released, confirmed }).toEqual({ released: true, confirmed: false });
      } finally {
        proxy.releaseReplies();
      }
      await releasing;
      await group.releaseConfirmed;
      expect(lockRequests(releaseMark).map((r) => r.op)).toEqual([ZK_OP.multi]);
      expect(countsSince(client, releaseBefore)).toEqual({ multi: 1 });
      expect(await nodeCounts(fx, names)).toEqual([0, 0, 0, 0, 0]);
    });

    it('bad input sends nothing', async () => {
      const before = client.client.counter.snapshot();
      const mark = proxy.requests.length;
      const calls: Array<[() => Promise<unknown>, unknown]> = [
        [() => client.acquireAll([]), InvalidLockListError],
        [() => client.acquireAll(Array.from({ length: 1001 }, (_, i) => `n${i}`)), InvalidLockListError],
        [() => client.acquireAll(['a', { name: 'b', mode: 'exclusive' as never }]), InvalidOptionError],
        [() => client.acquireAll(['a'], { timeout: 5 } as never), InvalidOptionError],
      ];
      for (const [call, type] of calls) await expect(call()).rejects.toBeInstanceOf(type);
      expect(countsSince(client, before)).toEqual({});
      expect(lockRequests(mark)).toEqual([]);
    });
  },
);

describe('acquireAll on ZooKeeper: all or nothing, seen in ZooKeeper', () => {
  let fx: LockFixture;
  let client: ZkLockBackend;
  let other: ZkLockBackend;
  let n = 0;
  const three = (): string[] => {
    n++;
    return [`m${n}-a`, `m${n}-b`, `m${n}-c`];
  };

  /**
   * Waits until the client waits (a watch on the blocker) with `expected` nodes per name.
   * Not just "two nodes on the blocked name": the first wave's try on it makes two for a
   * moment too, before it is withdrawn and the wait queues a node of its own.
   */
  const waiting = (names: string[], expected: number[]): Promise<void> =>
    waitUntil(
      async () =>
        client.client.session.watcherCount() === 1 &&
        JSON.stringify(await nodeCounts(fx, names)) === JSON.stringify(expected),
      `the client to wait with ${JSON.stringify(expected)} nodes on ${names.join(', ')}`,
    );

  beforeAll(async () => {
    fx = await LockFixture.create('multi-nodes');
    [client, other] = await fx.many(2);
  });
  afterAll(() => fx.cleanup());

  it('while it waits: one granted node before the blocked name, one queued node on it, none after', async () => {
    const [a, b, c] = three();
    const blocker = await other.acquire(b);
    const pending = client.acquireAll([c, a, b], { timeoutMs: 20_000 });
    await waiting([a, b, c], [1, 2, 0]);
    await blocker.release();
    const group = await pending;
    expect(await nodeCounts(fx, [a, b, c])).toEqual([1, 1, 1]);
    for (const [i, name] of group.names.entries()) expect(await fx.nodes(name)).toEqual([nodesOf(group)[i]]);
    await group.release();
    expect(await fx.tree()).toEqual([]);
  });

  it('a timeout with one name taken elsewhere leaves no node of its own, at once', async () => {
    const [a, b, c] = three();
    const blocker = await other.acquire(b);
    const error = await client.acquireAll([a, b, c], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ lockName: b, timeoutMs: 300 });
    // Right after the rejection, no polling: the deletes were awaited before it.
    expect(await nodeCounts(fx, [a, b, c])).toEqual([0, 1, 0]);
    expect(await fx.nodes(b)).toEqual([nodeOf(blocker)]);
    expect(client.client.session.watcherCount()).toBe(0);
    await blocker.release();
    expect(await fx.tree()).toEqual([]);
  });

  it('an abort leaves no node of its own, at once', async () => {
    const [a, b, c] = three();
    const blocker = await other.acquire(c);
    const controller = new AbortController();
    const pending = client.acquireAll([a, b, c], { signal: controller.signal }).catch((e: unknown) => e);
    await waiting([a, b, c], [1, 1, 2]);
    controller.abort();
    expect(await pending).toBeInstanceOf(LockAbortedError);
    expect(await nodeCounts(fx, [a, b, c])).toEqual([0, 0, 1]);
    expect(client.client.session.watcherCount()).toBe(0);
    await blocker.release();
    await waitUntil(async () => (await fx.tree()).length === 0, 'every directory to go');
  });

  it('directories not there yet: the multi create fails whole, and each name is created on its own', async () => {
    const names = three();
    const before = client.client.counter.snapshot();
    const group = await client.acquireAll(names);
    const sent = countsSince(client, before);
    // One multi refused (NO_NODE, nothing created), then each name alone as a single
    // acquire does it: its create refused, its directory made, its create again.
    expect(sent).toMatchObject({ multi: 1, create: 9 });
    expect(await nodeCounts(fx, names)).toEqual([1, 1, 1]);
    for (const [i, name] of group.names.entries()) expect(await fx.nodes(name)).toEqual([nodesOf(group)[i]]);
    await group.release();
    expect(await fx.tree()).toEqual([]);
  });

  it('a release whose multi delete fails (a node deleted by hand) deletes the others one by one', async () => {
    const names = three();
    const keeping = await fx.backend({ emptyDirectoryGraceMs: 60_000 }); // only node deletes are counted
    const group = await keeping.acquireAll(names);
    const [gone] = group.handles as ZkLockHandle[];
    await other.client.session.remove(gone.path);
    const before = keeping.client.counter.snapshot();
    await group.release();
    await group.releaseConfirmed;
    expect(countsSince(keeping, before)).toEqual({ multi: 1, remove: 3 }); // refused whole, then each node alone
    expect(await nodeCounts(fx, names)).toEqual([0, 0, 0]);
    expect(keeping.client.session.isLost).toBe(false);
  });

  it('a multi names the op that failed and changes nothing', async () => {
    const [a] = three();
    const session = client.client.session;
    const dir = `${fx.rootPath}/${a}`;
    await session.create(dir, Buffer.alloc(0), 'persistent');
    const ops = [`${dir}/x`, `${fx.rootPath}/missing/x`].map((path) => ({
      op: 'create' as const,
      path,
      data: Buffer.alloc(0),
      mode: 'persistent' as const,
    }));
    await expect(session.multi(ops)).rejects.toMatchObject({
      op: 'multi',
      path: `${fx.rootPath}/missing/x`,
      zkCode: 'NO_NODE',
    });
    expect(await session.exists(`${dir}/x`)).toBe(false);
    await session.remove(dir);
  });
});
