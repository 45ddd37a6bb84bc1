import { LockUnavailableError, ReentrantLocker, type ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;
/** Far above the ~50 ms a try takes to answer, far below the outage: a hang shows as `pending`. */
const ANSWER_MS = 1500;

/** What `promise` came to within `ms`: its value, its error, or `'pending'`. */
async function within<T>(promise: Promise<T>, ms = ANSWER_MS): Promise<T | Error | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([promise.catch((error: Error) => error), pending]);
  } finally {
    clearTimeout(timer);
  }
}

describe('while no ZooKeeper session is connected', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let client: ZkLockBackend;
  beforeAll(async () => (fx = await LockFixture.create('unavailable')));
  beforeEach(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    client = await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });
  });
  afterEach(() => proxy.stop());
  afterAll(() => fx.cleanup());

  /** Stops the proxy (every connection refused) and waits until the client sees it. */
  const cutOff = async (): Promise<void> => {
    await proxy.stop();
    await waitUntil(() => !client.client.session.isConnected, 'the client is disconnected');
  };
  const restore = async (): Promise<void> => {
    await proxy.start();
    await waitUntil(() => client.client.session.isConnected, 'the client reconnects');
  };
  const expectUnavailable = (outcome: unknown, state: 'disconnected' | 'lost'): void => {
    expect(outcome).toBeInstanceOf(LockUnavailableError);
    expect(outcome).toMatchObject({ code: 'LOCK_UNAVAILABLE', state });
  };

  it('every try answers at once with LockUnavailableError, and nothing is granted once the server is back', async () => {
    await cutOff();
    const ran = jest.fn();
    const locker = new ReentrantLocker(client, 10_000);
    const outcomes = await Promise.all([
      within(client.tryAcquire('t1')),
      within(client.acquire('t2', { timeoutMs: 0 })),
      within(client.acquireAll(['t3', { name: 't4', mode: 'read' }], { timeoutMs: 0 })),
      within(client.acquireLease('t5', { maxLeases: 2, timeoutMs: 0 })),
      within(locker.withLock('t6', ran, { ifLocked: 'skip' })),
      within(locker.withLocks(['t7', 't8'], ran, { ifLocked: 'skip' })),
    ]);
    const [tried, zero, all, lease, skipped, skippedAll] = outcomes;
    for (const outcome of [tried, zero, all, lease]) expectUnavailable(outcome, 'disconnected');
    expect((tried as LockUnavailableError).message).toMatch(/lock "t1" \(write\).*disconnected for \d+ ms/);
    expect((lease as LockUnavailableError).message).toMatch(/a lease of "t5"/);
    expect(skipped).toBeUndefined();
    expect(skippedAll).toBeUndefined();
    expect(ran).not.toHaveBeenCalled();

    await restore();
    await client.contenders('t1'); // a round trip: anything the calls left queued has reached the server
    for (const name of ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8']) expect(await fx.nodes(name)).toBeNull();
  });

  it('a try whose create is in flight when the connection drops rejects at once; its node goes once the server is back', async () => {
    const [holder] = await fx.many(1);
    const held = await holder.acquire('inflight'); // the directory exists: the create lands at once
    const sessionId = client.client.session.id;
    proxy.holdReplies(); // the create reaches the server, its reply does not come back
    const trying = client.tryAcquire('inflight');
    await fx.queued('inflight', 2);
    await cutOff();
    expectUnavailable(await within(trying), 'disconnected');
    proxy.releaseReplies();
    expect(await fx.nodes('inflight')).toHaveLength(2); // still there: nobody could delete it yet

    await restore();
    expect(client.client.session.id).toBe(sessionId); // the same session: its node would stay
    await waitUntil(async () => (await fx.nodes('inflight'))?.length === 1, 'the node found by its guid is deleted');
    expect(await fx.nodes('inflight')).toEqual([nodeOf(held)]);
    await held.release();
  });

  it('a wait whose deadline passes with no session connected rejects with LockUnavailableError, not LockTimeoutError', async () => {
    // A lock held through the outage: an idle session is never declared lost by the client
    // (nothing to protect; the server says whether it expired), a holding one is, at its deadline.
    const held = await client.acquire('w0');
    await cutOff();
    const patient = client.locks('w', { timeoutMs: 60_000 }); // outlives the session: read in the next one
    const [one, group, lease] = await Promise.all([
      client.acquire('w1', { timeoutMs: 300 }).catch((error: Error) => error),
      client.acquireAll(['w2', 'w3'], { timeoutMs: 300 }).catch((error: Error) => error),
      client.acquireLease('w4', { maxLeases: 1, timeoutMs: 300 }).catch((error: Error) => error),
    ]);
    for (const outcome of [one, group, lease]) expectUnavailable(outcome, 'disconnected');
    expect((one as LockUnavailableError).unavailableForMs).toBeGreaterThanOrEqual(300);
    expect((one as Error).message).not.toMatch(/contenders/);

    // Past the session: declared lost, a new one not connected. Reads and revocation too.
    await waitUntil(() => client.client.session.id === '', 'the session is declared lost', 3 * SESSION_MS);
    const reads = await Promise.all([
      within(client.acquire('w1', { timeoutMs: 200 })),
      within(client.contenders('w1', { timeoutMs: 200 })),
      within(client.locks('w', { timeoutMs: 200 })),
      within(client.requestRevocation('w1', { timeoutMs: 200 })),
      within(client.leaseContenders('w4', { timeoutMs: 200 })),
      within(client.tryAcquire('w1')),
    ]);
    for (const outcome of reads) expectUnavailable(outcome, 'lost');
    expect((reads[1] as Error).message).toMatch(/contenders\("w1"\).*session was lost/);

    expect(held.signal.aborted).toBe(true);
    await restore();
    expect(await patient).toEqual([]);
    await held.release();
    expect(await fx.nodes('w0')).toEqual([]); // its directory stays a while; its node is gone
    for (const name of ['w1', 'w2', 'w3', 'w4']) expect(await fx.nodes(name)).toBeNull();
  });

  it('waits (one lock, a group, a lease) ride out a short outage and are granted after it', async () => {
    const [holder] = await fx.many(1);
    const held = await holder.acquire('b1');
    const waiting = client.acquire('b1', { timeoutMs: 20_000 });
    await fx.queued('b1', 2);
    await cutOff();
    const group = client.acquireAll(['b2', 'b3'], { timeoutMs: 20_000 });
    const lease = client.acquireLease('b4', { maxLeases: 1, timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await restore();
    await held.release();
    const [lock, locks, leased] = await Promise.all([waiting, group, lease]);
    expect(await fx.nodes('b1')).toEqual([nodeOf(lock)]);
    await Promise.all([lock.release(), locks.release(), leased.release()]);
  });
});
