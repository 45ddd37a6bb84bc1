import { setTimeout as sleep } from 'node:timers/promises';

import * as zookeeper from 'node-zookeeper-client';

import { ZkLockBackend } from '../../lib/index';
import { uniqueRoot } from '../support/zk-test-env';
import { fourLetter } from '../support/zookeeper/four-letter';
import { ZkServer } from '../support/zookeeper/zk-server';

/** The largest session timeout the server grants (20 × tickTime 100): heartbeats every 133 ms. */
const T = 2000;

/**
 * Every write is a transaction in every server's log, fsynced: the liveness proof's
 * heartbeat writes (failed deletes) must go out only while something relies on the proof.
 * Counted on a server of this suite's own (others' transactions would count too), by the
 * growth of the last zxid `srvr` reports.
 */
describe('transactions committed by the liveness proof', () => {
  const server = new ZkServer({ tickTime: 100 });
  const rootPath = uniqueRoot('idle');
  const clients: ZkLockBackend[] = [];

  const zxid = async (): Promise<bigint> => {
    const line = /^Zxid: (0x[0-9a-f]+)$/m.exec(await fourLetter(server.clientPort, 'srvr'));
    if (!line) throw new Error('srvr said no Zxid');
    return BigInt(line[1]);
  };
  /** Transactions the server committed while `work` ran. */
  const committedDuring = async (work: () => Promise<unknown>): Promise<number> => {
    const before = await zxid();
    await work();
    return Number((await zxid()) - before);
  };

  beforeAll(async () => {
    await server.start();
    for (let i = 0; i < 2; i++)
      clients.push(
        await ZkLockBackend.connect({
          connectionString: server.connectionString,
          rootPath,
          sessionTimeoutMs: T,
          removeEmptyDirectories: false, // its deletes would count
        }),
      );
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server.destroy();
  });

  it('two idle clients commit nothing for 3 session timeouts, and are connected and trusted throughout', async () => {
    expect(clients.map((client) => client.client.session.timeoutMs)).toEqual([T, T]);
    const committed = await committedDuring(() => sleep(3 * T));
    expect(committed).toBe(0);
    for (const client of clients) {
      expect(client.client.session.isLost).toBe(false);
      // Nothing proved, nothing needed: the proof ages, the session stays connected (and up).
      expect(client.status()).toMatchObject({ state: 'connected', provenAgoMs: expect.any(Number) });
      expect(client.status().provenAgoMs).toBeGreaterThan(2 * T);
    }
  });

  it('the first acquire after idle is granted with a fresh proof (its create pairs with an idle read)', async () => {
    const [client] = clients;
    const startedAt = performance.now();
    const lock = await client.acquire('after-idle');
    expect(lock.isHeld()).toBe(true);
    // The proof is the send time of a read anchor at most a pair gap and a heartbeat before the create.
    expect(client.client.session.provenAt).toBeGreaterThan(startedAt - T / 2);
    await lock.release();
  });

  it('a holding client commits heartbeats at the budget (every T/15 at most); released, it commits nothing again', async () => {
    const [client] = clients;
    const lock = await client.acquire('held');
    const whileHeld = await committedDuring(() => sleep(2 * T));
    expect(lock.isHeld()).toBe(true);
    // At most 15 per timeout (a late timer makes fewer); more than none.
    expect(whileHeld).toBeLessThanOrEqual(2 * 15 + 1);
    expect(whileHeld).toBeGreaterThan(2);
    await lock.release();
    await sleep(T / 10); // the release's delete, and a heartbeat sent just before it, are committed
    expect(await committedDuring(() => sleep(T))).toBe(0);
  });

  it('an acquire waiting two timeouts commits nothing; granted after, one write proves the session and the lock is trusted', async () => {
    const [client] = clients;
    const dir = client.pathOf('awaited');
    // The holder: a plain client, which sends pings and writes nothing while it holds.
    const holder = zookeeper.createClient(server.connectionString, { sessionTimeout: T, retries: 0 });
    const connected = new Promise<void>((resolve) => holder.once('connected', () => resolve()));
    holder.connect();
    await connected;
    const call = <R>(send: (done: (error: unknown, result?: R) => void) => void): Promise<R> =>
      new Promise((resolve, reject) => send((error, result) => (error ? reject(error) : resolve(result as R))));
    try {
      await call((done) => holder.mkdirp(dir, done));
      const held = await call<string>((done) =>
        holder.create(`${dir}/${'0'.repeat(32)}__lock__`, zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, done),
      );
      const waiting = client.acquire('awaited', { timeoutMs: 10 * T });
      await sleep(T / 10); // its create is committed, and it watches the holder's node
      expect(await committedDuring(() => sleep(2 * T))).toBe(0);
      await call((done) => holder.remove(held, -1, done));
      const lock = await waiting;
      expect(lock.isHeld()).toBe(true);
      expect(performance.now() - client.client.session.provenAt).toBeLessThan(T / 2);
      await lock.release();
    } finally {
      holder.close();
    }
  });

  it('a lease granted after a wait past its proof is trusted: one write proves the session first', async () => {
    const [waiter] = clients;
    const holder = await ZkLockBackend.connect({ connectionString: server.connectionString, rootPath });
    try {
      const held = await holder.acquireLease('pool', { maxLeases: 1 });
      const waiting = waiter.acquireLease('pool', { maxLeases: 1, timeoutMs: 10 * T });
      await sleep(T); // the proof made by the waiter's create goes stale meanwhile
      expect(waiter.client.session.proofIsStale).toBe(true);
      await held.release();
      const lease = await waiting;
      expect(lease.isHeld()).toBe(true);
      await lease.release();
    } finally {
      await holder.close();
    }
  });

  it('a lock subscribing to a session idle past its proof is told at once: nothing is trusted on an idle-era proof', () => {
    const session = clients[1].client.session; // idle since it connected, several timeouts ago
    expect(session.checkTrust()).toBe(true); // nothing held: nothing watched
    const told: Error[] = [];
    session.onDistrust((reason) => told.push(reason));
    expect(told).toHaveLength(1);
    expect(session.checkTrust()).toBe(false);
  });
});
