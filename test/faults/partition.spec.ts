import { LockLostError } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;

describe('a holder is told its lock is lost before anyone else can take it', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  beforeAll(async () => (fx = await LockFixture.create('partition')));
  beforeEach(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterEach(() => proxy.stop());
  afterAll(() => fx.cleanup());

  const holderViaProxy = () => fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });

  it('in a silent partition, the holder aborts before the next client is granted', async () => {
    const holder = await holderViaProxy();
    const [next] = await fx.many(1);
    const held = await holder.acquire('p1');
    let abortedAt = 0;
    held.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    const waiting = next.acquire('p1', { timeoutMs: 30_000 }).then((lock) => ({ lock, at: performance.now() }));
    await fx.queued('p1', 2);

    proxy.blackhole(); // no FIN, no RST: node-zookeeper-client alone would stay "connected"
    const { lock, at: grantedAt } = await waiting;

    expect(abortedAt).toBeGreaterThan(0);
    // Not merely before: at least the safety margin before (a fifth of the timeout).
    expect(grantedAt - abortedAt).toBeGreaterThanOrEqual(holder.client.session.timeoutMs / 5);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    proxy.heal();
    await held.release(); // after the session is gone: a no-op
    await lock.release();
  });

  it('a dropped connection that reconnects at once aborts nothing', async () => {
    const holder = await holderViaProxy();
    const held = await holder.acquire('p2');
    proxy.drop();
    await waitUntil(() => holder.client.session.isConnected && proxy.connectionCount > 0, 'the holder reconnects');
    // Stay well past the point the lock would have been given up without answers.
    await new Promise((r) => setTimeout(r, SESSION_MS));
    expect(held.signal.aborted).toBe(false);
    expect(await fx.nodes('p2')).toEqual([nodeOf(held)]);
    await held.release();
  });

  it('a short silence that heals within the bound aborts nothing', async () => {
    const holder = await holderViaProxy();
    const held = await holder.acquire('p3');
    const sessionId = holder.client.session.id;
    proxy.blackhole();
    // The leader's proof of the session lags by up to gap + 2 × (heartbeat + tick) = 0.5 T
    // (2000 ms); trust ends at 0.8 T. A silence that, with the write timeout (400 ms) to
    // notice it, fits in the remaining 0.3 T (1200 ms) must abort nothing.
    await new Promise((r) => setTimeout(r, 500));
    proxy.heal();
    await new Promise((r) => setTimeout(r, SESSION_MS));
    expect(held.signal.aborted).toBe(false);
    expect(holder.client.session.id).toBe(sessionId);
    expect(await fx.nodes('p3')).toEqual([nodeOf(held)]);
    await held.release();
    expect(await fx.nodes('p3')).toBeNull();
  });
});
