import type { ZkLockBackend } from '../../lib/index';
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

  /** The lock requests sent since `mark`: no pings, no liveness heartbeat (`exists /`). */
  const lockRequests = (mark: number): ProxiedRequest[] =>
    proxy.requests.slice(mark).filter((r) => r.op !== ZK_OP.ping && !(r.op === ZK_OP.exists && r.path === '/'));

  it('the children read rides behind the create: it is sent before the create is answered', async () => {
    await (await client.acquire('ride')).release(); // the directory exists from now on
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
    await (await client.acquire('cost')).release(); // the directory exists from now on
    const dir = client.pathOf('cost');
    const before = client.client.counter.snapshot();
    const mark = proxy.requests.length;

    const lock = await client.acquire('cost');
    const path = lock.path;
    await lock.release();

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
});
