import { ReentrantLocker, type ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP, type ProxiedRequest } from '../support/tcp-proxy';
import { waitFor } from '../support/wait-for';
import { zkPort } from '../support/zk-test-env';

/** The path a write lock's sequential create asks for: `<dir>/<32 hex guid>__lock__`. */
const createPathOf = (dir: string): RegExp =>
  new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[0-9a-f]{32}__lock__$`);

/**
 * Where the round trips of an acquire go, seen on the wire through a TcpProxy. The lock
 * directory is kept between cycles (a long grace), as for a hot lock.
 */
describe('round trips of an uncontended acquire', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let client: ZkLockBackend;

  beforeAll(async () => {
    fx = await LockFixture.create('round-trips');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    // A session timeout long enough that replies held for a moment never look like a
    // silent server, and a grace long enough that the directory is never swept mid-test.
    client = await fx.backend({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 10_000,
      emptyDirectoryGraceMs: 60_000,
    });
  });
  afterAll(async () => {
    proxy.releaseReplies();
    await fx.cleanup();
    await proxy.stop();
  });

  /** Takes and releases `name` once, its delete answered: the directory exists, and the wire is quiet after. */
  const prime = async (name: string): Promise<void> => {
    const lock = await client.acquire(name);
    await lock.release();
    await lock.releaseConfirmed;
  };

  /** The lock requests sent since `mark`: no pings, no liveness heartbeat (`exists /`). */
  const lockRequests = (mark: number): ProxiedRequest[] =>
    proxy.requests.slice(mark).filter((r) => r.op !== ZK_OP.ping && !(r.op === ZK_OP.exists && r.path === '/'));

  it('the children read rides behind the create: it is sent before the create is answered', async () => {
    await prime('ride'); // the directory exists from now on
    const dir = client.pathOf('ride');
    const mark = proxy.requests.length;

    proxy.holdReplies(); // from now on nothing ZooKeeper answers reaches the client
    let settled = false;
    const acquiring = client.acquire('ride', { timeoutMs: 20_000 }).finally(() => (settled = true));
    try {
      // The read is on the wire although the client cannot have seen the create's reply.
      await waitFor(() => lockRequests(mark).some((r) => r.op === ZK_OP.getChildren2), {
        timeoutMs: 3000,
        what: () =>
          `a children read sent while the create's reply is held (sent: ${JSON.stringify(lockRequests(mark))})`,
      });
      const sent = lockRequests(mark);
      expect(sent).toHaveLength(2);
      expect(sent[0].op).toBe(ZK_OP.create);
      expect(sent[0].path).toMatch(createPathOf(dir));
      expect(sent[1]).toEqual({ op: ZK_OP.getChildren2, path: dir });
      // The server has answered the create (and the read), but the client has neither.
      await waitFor(() => proxy.heldReplyBytes > 0, { what: 'the server to answer into the hold' });
      expect(settled).toBe(false);
    } finally {
      proxy.releaseReplies();
    }

    const lock = await acquiring;
    expect(lockRequests(mark)).toEqual([
      { op: ZK_OP.create, path: expect.stringMatching(createPathOf(dir)) },
      { op: ZK_OP.getChildren2, path: dir },
    ]); // granted from that one round trip: nothing more was asked
    expect(await fx.nodes('ride')).toEqual([nodeOf(lock)]);
    await lock.release();
  });

  it('costs exactly one create, one children read and one delete, acquire and release together', async () => {
    await prime('cost'); // the directory exists from now on
    const dir = client.pathOf('cost');
    const before = client.client.counter.snapshot();
    const mark = proxy.requests.length;

    const lock = await client.acquire('cost');
    const path = lock.path;
    await lock.release();
    await lock.releaseConfirmed;

    const after = client.client.counter.snapshot();
    const delta = Object.fromEntries(
      Object.keys(after)
        .filter((op) => op !== 'heartbeat' && after[op] !== (before[op] ?? 0))
        .map((op) => [op, after[op] - (before[op] ?? 0)]),
    );
    expect(delta).toEqual({ create: 1, getChildren: 1, remove: 1 });
    // The same on the wire, in this order; the directory stays (its grace has not run out).
    expect(lockRequests(mark)).toEqual([
      { op: ZK_OP.create, path: expect.stringMatching(createPathOf(dir)) },
      { op: ZK_OP.getChildren2, path: dir },
      { op: ZK_OP.delete, path },
    ]);
    expect(await fx.nodes('cost')).toEqual([]);
  });

  it('a release resolves once its delete is sent, before ZooKeeper answers it; releaseConfirmed once it has', async () => {
    await prime('early');
    const dir = client.pathOf('early');
    const lock = await client.acquire('early');
    const mark = proxy.requests.length;
    let released = false;
    let confirmed = false;
    proxy.holdReplies(); // the delete reaches ZooKeeper, its answer does not reach the client
    try {
      const releasing = lock.release().then(() => (released = true));
      void lock.releaseConfirmed.then(() => (confirmed = true));
      expect(lock.isHeld()).toBe(false);
      await waitFor(() => proxy.heldReplyBytes > 0, { what: 'ZooKeeper to answer the delete into the hold' });
      expect(lockRequests(mark)).toEqual([{ op: ZK_OP.delete, path: lock.path }]);
      expect(await fx.inspector.children(dir)).toEqual([]); // done in ZooKeeper
      expect({ released, confirmed }).toEqual({ released: true, confirmed: false });
      await releasing;
    } finally {
      proxy.releaseReplies();
    }
    await lock.releaseConfirmed;
  });

  it("a lease too: its release resolves while the delete's answer is held back", async () => {
    const lease = await client.acquireLease('early-lease', { maxLeases: 1 });
    const dir = client.pathOf('early-lease');
    let released = false;
    let confirmed = false;
    proxy.holdReplies();
    try {
      const releasing = lease.release().then(() => (released = true));
      void lease.releaseConfirmed.then(() => (confirmed = true));
      await waitFor(async () => (await fx.inspector.children(dir))?.length === 0, { what: 'the lease node deleted' });
      await waitFor(() => proxy.heldReplyBytes > 0, { what: 'ZooKeeper to answer the delete into the hold' });
      expect({ released, confirmed }).toEqual({ released: true, confirmed: false });
      await releasing;
    } finally {
      proxy.releaseReplies();
    }
    await lease.releaseConfirmed;
  });

  it('releasesConfirmed() settles once ZooKeeper answered every delete sent so far (lock, lease, group), not before', async () => {
    const names = ['all-lock', 'all-lease', 'all-g1', 'all-g2'];
    const take = () =>
      Promise.all([
        client.acquire('all-lock'),
        client.acquireLease('all-lease', { maxLeases: 1 }),
        client.acquireAll(['all-g1', 'all-g2']),
      ]);
    const nodesLeft = async (): Promise<number[]> =>
      Promise.all(names.map(async (name) => (await fx.inspector.children(client.pathOf(name)))?.length ?? 0));

    // Read at once on another connection once it settled: every node is gone.
    await Promise.all((await take()).map((handle) => handle.release()));
    await client.releasesConfirmed();
    expect(await nodesLeft()).toEqual([0, 0, 0, 0]);

    const handles = await take();
    let confirmed = false;
    let confirming: Promise<unknown> | undefined;
    proxy.holdReplies(); // the deletes reach ZooKeeper, their answers do not reach the client
    try {
      await Promise.all(handles.map((handle) => handle.release()));
      confirming = client.releasesConfirmed().then(() => (confirmed = true));
      await waitFor(async () => (await nodesLeft()).every((count) => count === 0), {
        what: 'the deletes done in ZooKeeper',
      });
      await waitFor(() => proxy.heldReplyBytes > 0, { what: 'ZooKeeper to answer the deletes into the hold' });
      expect(confirmed).toBe(false);
    } finally {
      proxy.releaseReplies();
    }
    await confirming; // the answers arrived
  });

  it('release: "confirmed" (per call, or the client\'s option) waits for ZooKeeper\'s answer, as before', async () => {
    await prime('waits');
    const waiting = await fx.backend({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 10_000,
      emptyDirectoryGraceMs: 60_000,
      release: 'confirmed',
    });
    const handles = [
      await client.acquire('waits', { release: 'confirmed' }),
      await client.acquireLease('waits-lease', { maxLeases: 1, release: 'confirmed' }),
      await client.acquireAll(['waits-g1', 'waits-g2'], { release: 'confirmed' }),
      await waiting.acquire('waits-client'),
    ];
    // withLock, withLocks and withLease take it too: their bodies wait for the hold.
    const locker = new ReentrantLocker(client, 10_000);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = 0;
    const body = (): Promise<void> => (inside++, gate);
    const calls = [
      locker.withLock('waits-with', body, { release: 'confirmed' }),
      locker.withLocks(['waits-w1', 'waits-w2'], body, { release: 'confirmed' }),
      locker.withLease('waits-wl', body, { maxLeases: 1, release: 'confirmed' }),
    ];
    await waitFor(() => inside === calls.length, { what: 'every body to run' });
    const settled: boolean[] = [...handles, ...calls].map(() => false);
    proxy.holdReplies();
    try {
      open();
      const releasing = [...handles.map((handle) => handle.release()), ...calls].map((release, i) =>
        release.then(() => (settled[i] = true)),
      );
      await waitFor(() => proxy.heldReplyBytes > 0, { what: 'ZooKeeper to answer the deletes into the hold' });
      const names = [
        'waits',
        'waits-lease',
        'waits-g1',
        'waits-g2',
        'waits-client',
        'waits-with',
        'waits-w1',
        'waits-w2',
        'waits-wl',
      ];
      for (const name of names)
        await waitFor(async () => (await fx.inspector.children(client.pathOf(name)))?.length === 0, {
          what: `the delete on ${name} to be done in ZooKeeper`,
        });
      expect(settled).toEqual(settled.map(() => false)); // every release waits for its answer
      proxy.releaseReplies();
      await Promise.all(releasing);
    } finally {
      proxy.releaseReplies();
    }
  });

  it('release, then the same chain acquires the name again: the create goes after the delete, granted in one round trip', async () => {
    await prime('again');
    const dir = client.pathOf('again');
    const locker = new ReentrantLocker(client, 10_000);
    let mark = 0;
    let firstToken = 0n;
    let firstPath = '';
    await locker.withLock('again', (lock) => {
      firstToken = lock.fencingToken;
      firstPath = (lock as ZkLockHandle).path;
      mark = proxy.requests.length;
    });
    expect(locker.held('again')).toBeUndefined(); // not held the moment the release resolved
    const second = await locker.withLock('again', (lock) => {
      expect(lock.fencingToken).toBeGreaterThan(firstToken);
      return (lock as ZkLockHandle).path;
    });
    expect(second).not.toBe(firstPath);
    await waitFor(() => lockRequests(mark).length === 4, {
      what: () => `the second release on the wire (sent: ${JSON.stringify(lockRequests(mark))})`,
    });
    // On the wire: the first delete, then the create and its read, which saw the node gone
    // (no watch on it, no second read), then the second delete.
    expect(lockRequests(mark)).toEqual([
      { op: ZK_OP.delete, path: firstPath },
      { op: ZK_OP.create, path: expect.stringMatching(createPathOf(dir)) },
      { op: ZK_OP.getChildren2, path: dir },
      { op: ZK_OP.delete, path: second },
    ]);
  });
});
