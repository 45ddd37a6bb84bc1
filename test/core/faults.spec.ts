import { LockAbortedError, LockLostError } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

const seq = (node: string): number => Number(node.slice(-10));

describe('faults: connection loss and session expiry', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  beforeAll(async () => {
    fx = await LockFixture.create('faults');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  const viaProxy = () => fx.backend({ connectionString: proxy.connectionString });

  it('a create whose reply is lost leaves exactly one node, found again by its guid', async () => {
    const [direct] = await fx.many(1);
    const client = await viaProxy();
    await fx.inspector.create(direct.pathOf('f1')); // so the first create is the lock node's
    const sessionId = client.client.session.id;
    const cut = proxy.cutAfter(ZK_OP.create);
    const lock = await client.acquire('f1', { timeoutMs: 10_000 });
    await cut;

    expect(await fx.nodes('f1')).toEqual([nodeOf(lock)]);
    expect(client.client.counter.snapshot().create).toBe(1); // recovered, not created twice
    expect(client.client.session.id).toBe(sessionId);
    expect(await direct.tryAcquire('f1')).toBeNull(); // no second holder
    await lock.release();
  });

  it('a lost create reply while another client holds: still one node, served in order', async () => {
    const [holder] = await fx.many(1);
    const client = await viaProxy();
    const held = await holder.acquire('f1b');
    const cut = proxy.cutAfter(ZK_OP.create);
    const waiting = client.acquire('f1b', { timeoutMs: 10_000 });
    await cut;
    await fx.queued('f1b', 2);
    await held.release();
    const lock = await waiting;
    expect(await fx.nodes('f1b')).toEqual([nodeOf(lock)]);
    await lock.release();
  });

  it("hands the lock to the next waiter when the holder's session expires", async () => {
    const holder = await fx.expirable();
    const [waiter] = await fx.many(1);
    const held = await holder.acquire('f2');
    const waiting = waiter.acquire('f2', { timeoutMs: 15_000 });
    await fx.queued('f2', 2);
    const oldSession = holder.client.session.id;

    await fx.expire(holder);
    const lock = await waiting;
    await waitUntil(() => held.signal.aborted, 'the old holder learns its lock is lost');
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await held.release(); // a no-op, not an error
    expect(await fx.nodes('f2')).toEqual([nodeOf(lock)]);

    await waitUntil(() => holder.client.session.isConnected, 'the holder has a new session');
    expect(holder.client.session.id).not.toBe(oldSession);
    await lock.release();
    const again = await holder.acquire('f2', { timeoutMs: 5000 }); // usable after expiry
    await again.release();
  });

  it('a waiter in the middle dying does not let the next one in while the holder holds', async () => {
    const [holder, middle, last] = await fx.many(3);
    const held = await holder.acquire('f3');
    const middleWait = middle.acquire('f3', { timeoutMs: 15_000 }).catch((e: unknown) => e);
    await fx.queued('f3', 2);
    let lastGranted = false;
    const lastWait = last.acquire('f3', { timeoutMs: 15_000 }).then((l) => ((lastGranted = true), l));
    await fx.queued('f3', 3);

    const dir = holder.pathOf('f3');
    const holderPath = `${dir}/${nodeOf(held)}`;
    await middle.close(); // its node goes; `last` must re-read, see the holder, and watch it
    expect(await middleWait).toBeInstanceOf(Error);
    await fx.queued('f3', 2);
    await waitUntil(
      async () => (await watchedPaths(zkPort(), dir)).get(holderPath) === 1,
      'the last waiter watches the holder',
    );
    expect(lastGranted).toBe(false);

    await held.release();
    await (await lastWait).release();
  });

  it('a waiter whose session expires queues again in its new session and gets the lock', async () => {
    const [holder] = await fx.many(1);
    const waiter = await fx.expirable();
    const held = await holder.acquire('f4');
    const waiting = waiter.acquire('f4', { timeoutMs: 20_000 });
    await fx.queued('f4', 2);
    const firstNode = (await fx.nodes('f4'))!.sort((a, b) => seq(a) - seq(b))[1];

    await fx.expire(waiter);
    await waitUntil(async () => {
      const nodes = await fx.nodes('f4');
      return nodes?.length === 2 && !nodes.includes(firstNode);
    }, 'the waiter queues again with a new node');
    await held.release();
    const lock = await waiting;
    expect(nodeOf(lock)).not.toBe(firstNode);
    await lock.release();
  });

  it('keeps its place in the queue across a dropped connection', async () => {
    const [holder] = await fx.many(1);
    const client = await viaProxy();
    const held = await holder.acquire('f5');
    const waiting = client.acquire('f5', { timeoutMs: 15_000 });
    await fx.queued('f5', 2);
    const queuedAs = (await fx.nodes('f5'))!.find((n) => n !== nodeOf(held))!;
    const sessionId = client.client.session.id;

    proxy.drop();
    await waitUntil(() => client.client.session.isConnected && proxy.connectionCount > 0, 'the client reconnects');
    await held.release();
    const lock = await waiting;
    expect(nodeOf(lock)).toBe(queuedAs);
    expect(client.client.session.id).toBe(sessionId);
    await lock.release();
  });

  it('a cancelled acquire whose delete meets a connection loss still leaves no node', async () => {
    const [holder] = await fx.many(1);
    const client = await viaProxy();
    const held = await holder.acquire('f6');
    const controller = new AbortController();
    const waiting = client.acquire('f6', { signal: controller.signal }).catch((e: unknown) => e);
    await fx.queued('f6', 2);

    proxy.blackhole(); // the delete will never reach the server...
    controller.abort();
    await new Promise((r) => setTimeout(r, 100));
    proxy.drop(); // ...and the connection is lost with it
    proxy.heal();
    expect(await waiting).toBeInstanceOf(LockAbortedError);
    await waitUntil(async () => (await fx.nodes('f6'))?.length === 1, 'the reaper deletes the node after reconnecting');
    expect(await fx.nodes('f6')).toEqual([nodeOf(held)]);
    await held.release();
  });

  it('release retries through a lost delete reply', async () => {
    const client = await viaProxy();
    const lock = await client.acquire('f7');
    const cut = proxy.cutAfter(ZK_OP.delete);
    await lock.release();
    await cut;
    expect(await fx.nodes('f7')).toBeNull();
  });
});
