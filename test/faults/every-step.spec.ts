import { once } from 'node:events';

import { LockTimeoutError, ReentrantLocker, runOnce, type ZkLockBackend } from '../../lib/index';
import { jobRecordName } from '../../lib/core/port/job-record';
import { runOnceRecordName } from '../../lib/core/run-once/run-once';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';
import { ZkServer } from '../support/zookeeper/zk-server';

type Cut = 'cutBefore' | 'cutAfter';
const CUTS: Cut[] = ['cutBefore', 'cutAfter'];

/**
 * A connection lost at every step of acquire and release, just before the request
 * leaves (cutBefore) and just after the server acted on it (cutAfter): afterwards no
 * orphan node, never two holders, no hang, no watcher left behind.
 */
describe('a dropped connection at every step of acquire and release', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let direct: ZkLockBackend;
  let client: ZkLockBackend;
  let n = 0;
  beforeAll(async () => {
    fx = await LockFixture.create('every-step');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    direct = await fx.backend();
    client = await fx.backend({ connectionString: proxy.connectionString });
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  /** The client queues behind a holder while `step` of its acquire is cut, then gets the lock. */
  async function acquireThroughCut(op: number, cut: Cut): Promise<void> {
    const name = `step-${++n}`;
    const held = await direct.acquire(name);
    const sessionId = client.client.session.id;
    const reconnected = once(client.client, 'connected');
    const cutDone = proxy[cut](op);
    const waiting = client.acquire(name, { timeoutMs: 20_000 });
    await cutDone;
    await fx.queued(name, 2); // exactly one node of the client's, never two
    // A try answers LockUnavailableError while the client reconnects: asked once it is back.
    await reconnected;
    expect(await client.tryAcquire(name)).toBeNull(); // still queued behind the holder
    await fx.queued(name, 2);
    await held.release();
    const lock = await waiting;
    expect(await fx.nodes(name)).toEqual([nodeOf(lock)]);
    expect(await direct.tryAcquire(name)).toBeNull(); // one holder
    await lock.release();
    expect(await fx.nodes(name)).toBeNull();
    expect(client.client.session.id).toBe(sessionId); // the session survived
    expect(client.client.session.watcherCount()).toBe(0);
  }

  describe.each(CUTS)('%s', (cut) => {
    it('the create', () => acquireThroughCut(ZK_OP.create, cut));
    it('the children read', () => acquireThroughCut(ZK_OP.getChildren2, cut));
    it('the watch on the predecessor', () => acquireThroughCut(ZK_OP.getData, cut));

    it.each(['sent', 'confirmed'] as const)('the delete of a release (release: "%s")', async (release) => {
      const name = `step-${++n}`;
      const dir = client.pathOf(name);
      const lock = await client.acquire(name, { release });
      const waiting = direct.acquire(name, { timeoutMs: 20_000 });
      await fx.queued(name, 2);
      const cutDone = proxy[cut](ZK_OP.delete);
      await lock.release(); // "sent": answered at once; "confirmed": once the delete, retried if need be, is answered
      expect(lock.isHeld()).toBe(false);
      await cutDone;
      await lock.releaseConfirmed;
      // The node is gone in ZooKeeper (retried after the reconnect when the cut came first),
      // and only then is the other client granted, with a higher token.
      expect(await fx.inspector.children(dir)).not.toContain(nodeOf(lock));
      const next = await waiting;
      expect(await fx.inspector.children(dir)).toEqual([nodeOf(next)]);
      expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
      await next.release();
      expect(await fx.nodes(name)).toBeNull();
      expect(client.client.session.watcherCount()).toBe(0);
    });

    it('the delete of a timed-out acquire', async () => {
      const name = `step-${++n}`;
      const held = await direct.acquire(name);
      const cutDone = proxy[cut](ZK_OP.delete);
      const error = await client.acquire(name, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      await cutDone;
      await waitUntil(
        async () => (await fx.nodes(name))?.length === 1,
        'the abandoned node is deleted after reconnecting',
      );
      expect(await fx.nodes(name)).toEqual([nodeOf(held)]);
      await held.release();
      expect(client.client.session.watcherCount()).toBe(0);
    });
  });

  it('a server stopped and restarted on the same data keeps holders holding and waiters waiting', async () => {
    // Its own server, so stopping it disturbs no other suite.
    const server = new ZkServer({ tickTime: 500 }); // sessions up to 10 s: outlive the restart
    await server.start();
    const own = await LockFixture.create('restart');
    try {
      const [a, b] = await Promise.all(
        [1, 2].map(() => own.backend({ connectionString: server.connectionString, sessionTimeoutMs: 10_000 })),
      );
      const held = await a.acquire('r');
      const waiting = b.acquire('r', { timeoutMs: 30_000 });
      await waitUntil(async () => (await b.contenders('r')).length === 2, 'b queues');
      const nodeBefore = nodeOf(held);

      await server.stop('SIGKILL');
      await server.start();

      await waitUntil(() => a.client.session.isConnected && b.client.session.isConnected, 'both reconnect');
      expect(held.signal.aborted).toBe(false);
      const contenders = await a.contenders('r');
      expect(contenders.map((c) => [c.node === nodeBefore, c.holding])).toEqual([
        [true, true],
        [false, false],
      ]);
      await held.release();
      const lock = await waiting;
      expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
      await lock.release();
      await Promise.all([a.close(), b.close()]);
    } finally {
      await server.destroy();
      await own.inspector.close();
    }
  });

  /**
   * A record write whose first try committed but whose answer was lost is tried again once
   * the client reconnects, on the same session: the retry meets its own write, and must not
   * count it as another's.
   */
  describe('cutAfter the record write at the end of a job call or runOnce', () => {
    /** The requests of op `op` the proxy passed on since `from`. */
    const sent = (op: number, from: number): number => proxy.requests.slice(from).filter((r) => r.op === op).length;

    it("a job's run: listed once, not appended again over its own first try", async () => {
      const locker = new ReentrantLocker(client, 10_000);
      const job = { maxHoldMs: 60_000 } as const; // a job call: its runs are recorded
      await locker.withLock('nightly', () => 'first', job);
      const first = await direct.readRecord(jobRecordName('nightly'));
      expect(first?.version).toBe(0);

      const sessionId = client.client.session.id;
      const from = proxy.requests.length;
      const cut = proxy.cutAfter(ZK_OP.setData); // the versioned write of the second run's end
      await locker.withLock('nightly', () => 'second', job);
      await cut;
      expect(sent(ZK_OP.setData, from)).toBeGreaterThanOrEqual(2); // tried again after the reconnect

      const record = await direct.readRecord(jobRecordName('nightly'));
      expect(record?.version).toBe(1); // one write of the second run: the first try's
      const runs = record?.data.runs as Array<{ outcome: string }>;
      expect(runs).toHaveLength(2);
      expect(runs.map((run) => run.outcome)).toEqual(['ok', 'ok']);
      expect(client.client.session.id).toBe(sessionId);
      expect((await fx.nodes('nightly')) ?? []).toEqual([]);
    });

    it("runOnce's completion: the retry finds its own record (its runId) and resolves true", async () => {
      const from = proxy.requests.length;
      const cut = proxy.cutAfter(ZK_OP.multi); // the completion, in one transaction with the lock's check
      expect(await runOnce(client, 'migrate', () => undefined, { by: 'me' })).toBe(true);
      await cut;
      expect(sent(ZK_OP.multi, from)).toBe(2);
      const record = await direct.readRecord(runOnceRecordName('migrate'));
      expect(record).toMatchObject({ version: 0, data: { by: 'me', outcome: 'done', runId: expect.any(String) } });
      expect(await runOnce(direct, 'migrate', () => undefined)).toBe(false);
      expect((await fx.nodes('migrate')) ?? []).toEqual([]);
    });
  });
});
