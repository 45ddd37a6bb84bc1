import { createServer } from 'node:net';

import { resolveZkLockOptions } from '../../lib/core/recipe/zk-lock.options';
import { LockClientClosedError, ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkConnect, zkPort } from '../support/zk-test-env';

describe('session layer', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('session')));
  afterAll(() => fx.cleanup());

  it('reports disconnect and reconnect on the same session as events', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const client = await fx.backend({ connectionString: proxy.connectionString });
      const events: string[] = [];
      client.client.on('disconnected', () => events.push('disconnected'));
      client.client.on('connected', () => events.push('connected'));
      const id = client.client.session.id;
      expect(id).toMatch(/^[0-9a-f]{16}$/);

      proxy.drop();
      await waitUntil(() => events.includes('connected'), 'the client reconnects');
      expect(events).toEqual(['disconnected', 'connected']);
      expect(client.client.session.id).toBe(id);
      await client.close();
    } finally {
      await proxy.stop();
    }
  });

  it('builds a fresh session after expiry and says so', async () => {
    const client = await fx.expirable();
    const lost: unknown[] = [];
    client.client.on('session-lost', (error) => lost.push(error));
    const oldSession = client.client.session;
    await fx.expire(client);
    await waitUntil(() => client.client.session !== oldSession && client.client.session.isConnected, 'a new session connects');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ code: 'SESSION_LOST', why: 'expired by the server' });
    expect(oldSession.signal.aborted).toBe(true);
    expect(client.client.session.id).not.toBe(oldSession.id);
    const lock = await client.acquire('after-expiry', { timeoutMs: 5000 });
    await lock.release();
  });

  it('gives up held locks, then the session, when the server stays out of reach', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    const client = await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 1000 });
    const lock = await client.acquire('unreachable');
    const lostWhy: string[] = [];
    client.client.on('session-lost', (error: { why: string }) => lostWhy.push(error.why));
    await proxy.stop(); // the server is unreachable from now on
    await waitUntil(() => lock.signal.aborted, 'the held lock reports itself lost');
    expect(lostWhy).toEqual([]); // the lock is given up before the session is
    await waitUntil(() => lostWhy.length > 0, 'the session is declared lost');
    expect(lostWhy).toHaveLength(1);
    expect(lostWhy[0]).toMatch(/^no answer from ZooKeeper for \d+ ms, the whole session timeout/);
    expect(lock.signal.reason.message).toMatch(/no answer from ZooKeeper for \d+ ms: the server may expire the session/);
    await lock.release(); // a no-op
    await client.close();
  });

  it('close() does not wait for a server it cannot reach', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    const client = await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 4000 });
    const lock = await client.acquire('close-unreachable');
    await proxy.stop();
    await waitUntil(() => !client.client.session.isConnected, 'the client notices the loss');
    await client.close();
    // The session ended because we closed it, not because the contact deadline ran out.
    expect(client.client.session.signal.reason).toMatchObject({ why: 'closed' });
    expect(lock.signal.aborted).toBe(false); // released by close(), not lost
  });

  it('gives up on a server that accepts connections but never answers, and tries the next', async () => {
    const frozen = createServer(() => undefined); // accepts, then says nothing
    await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
    const frozenAddress = `127.0.0.1:${(frozen.address() as { port: number }).port}`;
    try {
      for (let i = 0; i < 3; i++) {
        // Whichever server the client tries first, it ends up connected to the live one.
        const client = await fx.backend({ connectionString: `${frozenAddress},${zkConnect()}`, sessionTimeoutMs: 2000, connectTimeoutMs: 15_000 });
        await (await client.acquire('frozen-neighbour')).release();
        await client.close();
      }
    } finally {
      frozen.close();
    }
  });

  it('closes a backend that never started without connecting', async () => {
    const backend = ZkLockBackend.unconnected(resolveZkLockOptions({ connectionString: zkConnect(), rootPath: fx.rootPath }));
    expect(backend.client.isStarted).toBe(false);
    await backend.close();
    await expect(backend.acquire('x')).rejects.toBeInstanceOf(LockClientClosedError);
    await expect(backend.start()).rejects.toBeInstanceOf(LockClientClosedError);
    expect(backend.client.isStarted).toBe(false);
  });

  it('closes cleanly: later calls fail with LockClientClosedError', async () => {
    const client = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: fx.rootPath });
    await client.close();
    await client.close(); // twice is fine
    await expect(client.acquire('x')).rejects.toBeInstanceOf(LockClientClosedError);
    await expect(client.tryAcquire('x')).rejects.toBeInstanceOf(LockClientClosedError);
    expect(client.client.session.isLost).toBe(true);
  });
});
