import { LockAbortedError, LockLostError, LockTimeoutError, type ZkLockBackend } from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/zookeeper/lease';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

const SET_DATA = 5; // ZooKeeper's op code; the proxy's table stops at the lock recipe's ops
const seq = (node: string): number => Number(node.slice(-10));
const leafOf = (lease: ZkLeaseHandle): string => lease.path.slice(lease.path.lastIndexOf('/') + 1);

type Cut = 'cutBefore' | 'cutAfter';

/**
 * Leases through faults: a connection cut just before and just after each request of an
 * acquire (and of the grant signal, and of a release), a holder's session expiring, a
 * waiter's session expiring. Afterwards: no extra node, never two leases for one call,
 * no hang, no listener left, and ZooKeeper's nodes say so.
 */
describe('leases through connection loss and session expiry', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let direct: ZkLockBackend[];
  let client: ZkLockBackend;
  let n = 0;
  beforeAll(async () => {
    fx = await LockFixture.create('lease-faults');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    direct = await fx.many(3);
    client = await fx.backend({ connectionString: proxy.connectionString });
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  const queue = async (name: string): Promise<string[]> =>
    ((await fx.nodes(name)) ?? []).sort((a, b) => seq(a) - seq(b));

  /**
   * max=1: a direct holder, a direct waiter, then the client (so it watches the waiter's
   * node). The cut is armed at `when`: before the client queues, or once it waits.
   */
  async function throughCut(op: number, cut: Cut, when: 'queueing' | 'waiting'): Promise<void> {
    const name = `step-${++n}`;
    await (await client.acquireLease(name, { maxLeases: 1 })).release(); // the client has checked the semaphore
    const sessionId = client.client.session.id;
    const holder = await direct[0].acquireLease(name, { maxLeases: 1 });
    const head = direct[1].acquireLease(name, { maxLeases: 1, timeoutMs: 20_000 });
    await fx.queued(name, 2);
    let cutDone: Promise<void> | undefined;
    if (when === 'queueing') cutDone = proxy[cut](op);
    const waiting = client.acquireLease(name, { maxLeases: 1, timeoutMs: 20_000 });
    await fx.queued(name, 3); // exactly one node of the client's, never two
    if (when === 'waiting') {
      await waitUntil(() => client.client.session.watcherCount() === 1, 'the client watches the node ahead');
      cutDone = proxy[cut](op);
    }
    await holder.release();
    const headLease = await head;
    if (when === 'queueing') await cutDone;
    await fx.queued(name, 2);
    await headLease.release(); // the client's turn
    if (when === 'waiting') await cutDone;
    const lease = await waiting;
    expect(await queue(name)).toEqual([leafOf(lease)]);
    await expect(direct[2].acquireLease(name, { maxLeases: 1, timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError); // one lease, held
    await lease.release();
    expect(await fx.nodes(name)).toBeNull();
    expect(client.client.session.id).toBe(sessionId); // the session survived
    expect(client.client.session.watcherCount()).toBe(0);
  }

  describe.each<Cut>(['cutBefore', 'cutAfter'])('%s', (cut) => {
    it('the create', () => throughCut(ZK_OP.create, cut, 'queueing'));
    it('the children read behind the create', () => throughCut(ZK_OP.getChildren2, cut, 'queueing'));
    it('the watch on the node ahead', () => throughCut(ZK_OP.getData, cut, 'queueing'));
    it('the children read (with a watch) when woken', () => throughCut(ZK_OP.getChildren2, cut, 'waiting'));

    it('the grant signal: sent again after reconnecting, it still wakes the waiter behind', async () => {
      // max=2: the client heads the line, S waits behind it. When the client is granted, only
      // its signal can tell S that S heads the line now; S must then get the next free lease.
      const name = `step-${++n}`;
      await (await client.acquireLease(name, { maxLeases: 2 })).release();
      const holders = [
        await direct[0].acquireLease(name, { maxLeases: 2 }),
        await direct[2].acquireLease(name, { maxLeases: 2 }),
      ];
      const waiting = client.acquireLease(name, { maxLeases: 2, timeoutMs: 20_000 });
      await fx.queued(name, 3);
      const behind = direct[1].acquireLease(name, { maxLeases: 2, timeoutMs: 20_000 });
      await fx.queued(name, 4);
      await waitUntil(() => direct[1].client.session.watcherCount() === 1, 'S watches the client’s node');
      const cutDone = proxy[cut](SET_DATA);
      await holders[0].release();
      const lease = await waiting;
      await cutDone;
      await holders[1].release(); // a free lease: S gets it only if the signal made it the head
      const next = await behind;
      expect((await queue(name)).sort()).toEqual([leafOf(lease), leafOf(next)].sort());
      await Promise.all([lease.release(), next.release()]);
    });

    it('the delete of a release', async () => {
      const name = `step-${++n}`;
      const lease = await client.acquireLease(name, { maxLeases: 2 });
      const cutDone = proxy[cut](ZK_OP.delete);
      await lease.release();
      await cutDone;
      await waitUntil(async () => (await fx.nodes(name)) === null, 'the node (and directory) to go');
    });

    it('the delete of a timed-out acquire', async () => {
      const name = `step-${++n}`;
      const held = await direct[0].acquireLease(name, { maxLeases: 1 });
      const cutDone = proxy[cut](ZK_OP.delete);
      const error = await client.acquireLease(name, { maxLeases: 1, timeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      await cutDone;
      await waitUntil(
        async () => (await fx.nodes(name))?.length === 1,
        'the abandoned node is deleted after reconnecting',
      );
      expect(await fx.nodes(name)).toEqual([leafOf(held)]);
      await held.release();
      expect(client.client.session.watcherCount()).toBe(0);
    });
  });

  it('an aborted wait whose delete meets a connection loss still leaves no node', async () => {
    const holder = await direct[0].acquireLease('abort-loss', { maxLeases: 1 });
    const controller = new AbortController();
    const waiting = client
      .acquireLease('abort-loss', { maxLeases: 1, signal: controller.signal })
      .catch((e: unknown) => e);
    await fx.queued('abort-loss', 2);
    proxy.blackhole(); // the delete never reaches the server...
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.drop(); // ...and the connection is lost with it
    proxy.heal();
    expect(await waiting).toBeInstanceOf(LockAbortedError);
    await waitUntil(
      async () => (await fx.nodes('abort-loss'))?.length === 1,
      'the reaper deletes the node after reconnecting',
    );
    expect(await fx.nodes('abort-loss')).toEqual([leafOf(holder)]);
    await holder.release();
  });

  it('a waiter keeps its place across a dropped connection', async () => {
    const holder = await direct[0].acquireLease('keep-place', { maxLeases: 1 });
    const waiting = client.acquireLease('keep-place', { maxLeases: 1, timeoutMs: 15_000 });
    await fx.queued('keep-place', 2);
    const queuedAs = (await queue('keep-place'))[1];
    const sessionId = client.client.session.id;
    proxy.drop();
    await waitUntil(() => client.client.session.isConnected && proxy.connectionCount > 0, 'the client reconnects');
    await holder.release();
    const lease = await waiting;
    expect(leafOf(lease)).toBe(queuedAs);
    expect(client.client.session.id).toBe(sessionId);
    await lease.release();
  });

  it("a holder's session expiring frees its lease for the next waiter; its signal aborts with LockLostError", async () => {
    const expiring = await fx.expirable();
    const held = [
      await expiring.acquireLease('expiry', { maxLeases: 2 }),
      await direct[0].acquireLease('expiry', { maxLeases: 2 }),
    ];
    const waiting = direct[1].acquireLease('expiry', { maxLeases: 2, timeoutMs: 15_000 });
    await fx.queued('expiry', 3);
    await fx.expire(expiring);
    const lease = await waiting;
    await waitUntil(() => held[0].signal.aborted, 'the expired holder learns its lease is lost');
    expect(held[0].signal.reason).toBeInstanceOf(LockLostError);
    expect((held[0].signal.reason as Error).message).toContain('Lock "expiry" was lost');
    expect((await queue('expiry')).sort()).toEqual([leafOf(held[1]), leafOf(lease)].sort());
    await Promise.all([held[1].release(), lease.release(), held[0].release()]);
  });

  it("a waiter whose session expires queues again in its new session (as a lock's waiter does), behind those who came meanwhile, and gets a lease", async () => {
    const expiring = await fx.expirable();
    const holder = await direct[0].acquireLease('requeue', { maxLeases: 1 });
    const waiting = expiring.acquireLease('requeue', { maxLeases: 1, timeoutMs: 20_000 });
    await fx.queued('requeue', 2);
    const first = (await queue('requeue'))[1];
    await fx.expire(expiring);
    await waitUntil(async () => {
      const nodes = await queue('requeue');
      return nodes.length === 2 && !nodes.includes(first);
    }, 'the waiter queues again with a new node');
    await holder.release();
    const lease = await waiting;
    expect(leafOf(lease)).not.toBe(first);
    expect(await queue('requeue')).toEqual([leafOf(lease)]);
    await lease.release();
  });
});
