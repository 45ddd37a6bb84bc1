import type { ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

/**
 * The waiter's read, sent from inside the notification, against
 * connection faults at each step of the handoff. Each test asserts the waiter is granted
 * only once the holder's node is gone, that exactly one node (the waiter's) remains, and
 * that no watch or listener is left behind.
 */
describe('the woken read under connection faults', () => {
  let fx: LockFixture;
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    fx = await LockFixture.create('woken-read');
  });
  afterAll(async () => {
    await fx.cleanup();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  async function proxied(): Promise<{ proxy: TcpProxy; backend: ZkLockBackend }> {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    proxies.push(proxy);
    return { proxy, backend: await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 8000 }) };
  }

  async function queuedBehind(name: string, holderPath: string): Promise<void> {
    await fx.queued(name, 2);
    await waitUntil(async () => (await watchedPaths(zkPort(), fx.rootPath)).get(holderPath) === 1, 'waiter watches');
  }

  async function settled(name: string, waiter: ZkLockBackend): Promise<void> {
    await waitUntil(async () => (await watchedPaths(zkPort(), fx.rootPath)).size === 0, 'no watch left');
    expect(waiter.client.session.watcherCount()).toBe(0);
    expect(await fx.nodes(name)).toBeNull();
  }

  for (const [label, mode] of [
    ['writer', 'write'],
    ['reader', 'read'],
  ] as const) {
    it(`${label}: the woken read's reply is cut: it reads again after reconnecting, and holds alone`, async () => {
      const holderClient = await fx.backend();
      const { proxy, backend: waiter } = await proxied();
      const holder = await holderClient.acquire(`cut-${mode}`);
      const waiting = waiter.acquire(`cut-${mode}`, { mode, timeoutMs: 30_000 });
      await queuedBehind(`cut-${mode}`, holder.path);
      const cut = proxy.cutAfter(ZK_OP.getChildren2);
      await holder.release();
      await cut;
      const lock = await waiting;
      expect(await fx.nodes(`cut-${mode}`)).toEqual([nodeOf(lock)]);
      await lock.release();
      await settled(`cut-${mode}`, waiter);
    });
  }

  it('the notification is lost with the connection: SetWatches on reconnect wakes the waiter', async () => {
    const holderClient = await fx.backend();
    const { proxy, backend: waiter } = await proxied();
    const holder = await holderClient.acquire('lost-note');
    const waiting = waiter.acquire('lost-note', { timeoutMs: 30_000 });
    await queuedBehind('lost-note', holder.path);
    proxy.holdReplies(); // the notification will never reach the waiter on this connection
    await holder.release();
    await waitUntil(() => proxy.heldReplyBytes > 0, 'the notification held at the proxy');
    proxy.drop();
    proxy.releaseReplies(); // nothing to deliver to: the link is gone
    const lock = await waiting;
    expect(await fx.nodes('lost-note')).toEqual([nodeOf(lock)]);
    await lock.release();
    await settled('lost-note', waiter);
  });

  it("the waiter's watch request is cut unsent and the holder goes meanwhile: it finds the node gone and holds", async () => {
    const holderClient = await fx.backend();
    const { proxy, backend: waiter } = await proxied();
    const first = await holderClient.acquire('unsent');
    const cut = proxy.cutBefore(ZK_OP.getData); // the waiter's watch on `first`
    const middle = waiter.acquire('unsent', { timeoutMs: 30_000 });
    await cut;
    await proxy.stop(); // keep it away while the holder goes
    await first.release();
    expect(await fx.nodes('unsent')).toHaveLength(1); // the waiter's node only
    await proxy.start();
    const lock = await middle;
    expect(await fx.nodes('unsent')).toEqual([nodeOf(lock)]);
    await lock.release();
    await settled('unsent', waiter);
  });

  it("the waiter's session expires while it waits: it queues anew in a new session, holds alone", async () => {
    const holderClient = await fx.backend();
    const waiter = await fx.expirable({ sessionTimeoutMs: 8000 });
    const holder = await holderClient.acquire('expired');
    const waiting = waiter.acquire('expired', { mode: 'read', timeoutMs: 30_000 });
    await queuedBehind('expired', holder.path);
    const oldNodes = await fx.nodes('expired');
    const oldSession = waiter.client.session;
    await fx.expire(waiter); // the waiter's node goes with its session
    await holder.release();
    const lock = await waiting;
    expect(waiter.client.session).not.toBe(oldSession);
    const nodes = await fx.nodes('expired');
    expect(nodes).toEqual([nodeOf(lock)]);
    expect(oldNodes).not.toContain(nodeOf(lock));
    await lock.release();
    await settled('expired', waiter);
  });
});
