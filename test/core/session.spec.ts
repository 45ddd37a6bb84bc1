import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { resolveZkLockOptions } from '../../lib/core/zookeeper/zk-lock-options';
import { LockClientClosedError, LockLostError, ZkConnectionError, ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkConnect, zkPort } from '../support/zk-test-env';

const realSetTimeout = setTimeout;

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
    await waitUntil(
      () => client.client.session !== oldSession && client.client.session.isConnected,
      'a new session connects',
    );
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
    expect(lostWhy[0]).toMatch(
      /^no proof for \d+ ms, the whole session timeout, that ZooKeeper's leader heard from this session/,
    );
    expect(lock.signal.reason.message).toMatch(
      /no proof for \d+ ms that ZooKeeper's leader heard from this session: it may expire the session/,
    );
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
    // Released by close() under a holder that had not released it: told so first.
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason.message).toMatch(/the lock client is closing while this holder had not released it/);
  });

  it('close() while a reconnect is under way leaves no timer of it behind (nothing keeps the process alive)', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const client = await fx.backend({ connectionString: proxy.connectionString });
      // node-zookeeper-client arms a timer per connection attempt, cleared once its socket connects or fails.
      const made: Array<ReturnType<typeof setTimeout>> = [];
      const arm = jest.spyOn(globalThis, 'setTimeout');
      arm.mockImplementation(((...args: Parameters<typeof setTimeout>) => {
        const timer = realSetTimeout(...args);
        if (new Error().stack?.includes('ConnectionManager')) made.push(timer);
        return timer;
      }) as typeof setTimeout);
      try {
        const cut = proxy.cutAfter(ZK_OP.exists);
        // Its loss comes back once the link is gone and the client has begun its next attempt.
        await expect(client.client.session.exists('/')).rejects.toMatchObject({ zkCode: 'CONNECTION_LOSS' });
        await cut;
        expect(client.client.session.isConnected).toBe(false);
        await client.close();
      } finally {
        arm.mockRestore();
      }
      expect(made.length).toBeGreaterThan(0); // the attempt under way at close() had armed one
      // Cleared (a timer that fired is destroyed too, but each would run for the whole connect timeout).
      expect(made.map((timer) => (timer as unknown as { _destroyed: boolean })._destroyed)).toEqual(
        made.map(() => true),
      );
    } finally {
      await proxy.stop();
    }
  });

  it('gives up on a server that accepts connections but never answers, and tries the next', async () => {
    const sessionTimeoutMs = 3000;
    const attemptBoundMs = Math.round((sessionTimeoutMs * 2) / 3); // the attempt deadline: the read timeout
    // node-zookeeper-client shuffles the servers, so the live one, behind a proxy, answers
    // nothing either (blackhole) until the frozen one has been tried: whatever the order,
    // the client must give up on a silent server to get anywhere.
    const live = new TcpProxy(zkPort());
    await live.start();
    live.blackhole();
    const frozenSockets: Array<{ acceptedAt: number; closedAt?: number }> = [];
    const frozen = createServer((socket) => {
      // Accepts, then says nothing: never a byte, never a close from this side.
      const entry: { acceptedAt: number; closedAt?: number } = { acceptedAt: performance.now() };
      frozenSockets.push(entry);
      socket.resume(); // reads and drops what the client sends, so its close is seen at once
      socket.on('error', () => undefined);
      socket.on('close', () => (entry.closedAt = performance.now()));
      live.heal();
    });
    await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
    const frozenAddress = `127.0.0.1:${(frozen.address() as { port: number }).port}`;
    let client: ZkLockBackend | undefined;
    try {
      // Without the attempt deadline the client waits on a silent server forever, and
      // this fails with ZkConnectionError after connectTimeoutMs.
      client = await fx.backend({
        connectionString: `${frozenAddress},${live.connectionString}`,
        sessionTimeoutMs,
        connectTimeoutMs: 15_000,
      });
      const connectedAt = performance.now();

      // It tried the frozen server once, and dropped it itself, before connecting: at the
      // attempt deadline (the timer starts before the spin delay, at most 250 ms, that may
      // precede the TCP connect), with room for a busy machine short of the session timeout.
      expect(frozenSockets).toHaveLength(1);
      const [attempt] = frozenSockets;
      expect(attempt.closedAt).toBeDefined();
      expect(attempt.closedAt!).toBeLessThanOrEqual(connectedAt);
      const heldMs = attempt.closedAt! - attempt.acceptedAt;
      expect(heldMs).toBeGreaterThan(attemptBoundMs / 2);
      expect(heldMs).toBeLessThan(attemptBoundMs + 1000);

      // ...and then connected to the live server, through the proxy, where it works.
      expect(client.client.session.isConnected).toBe(true);
      expect(live.connectionCount).toBe(1);
      const mark = live.requests.length;
      const lock = await client.acquire('frozen-neighbour', { timeoutMs: 5000 });
      expect(await fx.nodes('frozen-neighbour', client)).toEqual([nodeOf(lock)]);
      expect(live.requests.slice(mark).map((r) => r.op)).toContain(ZK_OP.create); // it went through the live server
      await lock.release();
      await client.close();
      expect(frozenSockets).toHaveLength(1); // never went back to it
    } finally {
      await client?.close();
      frozen.close();
      await live.stop();
    }
  });

  it('waits for a server that refuses connections for less than 2 s (it is starting), and fails fast on one that keeps refusing', async () => {
    const starting = new TcpProxy(zkPort());
    await starting.start();
    await starting.stop(); // its port now refuses connections
    const startsLater = sleep(1_000).then(() => starting.start());
    const client = await fx.backend({ connectionString: starting.connectionString });
    await startsLater;
    expect(client.client.session.isConnected).toBe(true);
    await client.close();
    await starting.stop();

    const refusedAt = performance.now();
    const error = await fx.backend({ connectionString: starting.connectionString }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toMatch(/refused the connection for 2000 ms/);
    expect(performance.now() - refusedAt).toBeGreaterThanOrEqual(2_000); // not before the 2 s
  });

  it('closes a backend that never started without connecting', async () => {
    const backend = ZkLockBackend.unconnected(
      resolveZkLockOptions({ connectionString: zkConnect(), rootPath: fx.rootPath }),
    );
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
