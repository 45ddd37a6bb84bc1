import { once } from 'node:events';

import { LockLostError, ReentrantLocker, type ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { KEPT_HOLD_MARKER } from '../support/node-names';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { ZkServer } from '../support/zookeeper/zk-server';

// tickTime 200 ms: sessions of 4 s at most, on the suite's server and on the one restarted here.
const SESSION_MS = 4000;

/** Resolves when `backend`'s client declares its session lost. */
const sessionLost = (backend: ZkLockBackend): Promise<unknown> => once(backend.client, 'session-lost');

/** The ids of the sessions the server keeps, as the library prints them. */
const sessionIds = async (port: number): Promise<string[]> =>
  [...(await liveSessions(port))].map((id) => id.toString(16)).sort();

const equal = (a: readonly string[], b: readonly string[]): boolean => a.join() === b.join();

const idOf = (backend: ZkLockBackend): string => sessionIdOf(backend.client.session.id).toString(16);

describe('a session declared lost by the client is asked back: what its waiters left is deleted at once, what its holders hold stays until they release it', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('reattach')));
  afterAll(() => fx.cleanup());

  it('the only server killed past the deadline and restarted on its data: the lock is free once its holder released it, while the revived sessions live, one session per client', async () => {
    // Its own server, so stopping it disturbs no other suite.
    const server = new ZkServer({ tickTime: 200 });
    await server.start();
    try {
      const [a, b, c] = await Promise.all(
        [1, 2, 3].map(() => fx.backend({ connectionString: server.connectionString, sessionTimeoutMs: SESSION_MS })),
      );
      const before = [idOf(a), idOf(b), idOf(c)].sort();
      const held = await a.acquire('r1');
      const heldForC = await a.acquire('r1-c');
      // b holds a lock too: a session holding nothing watches no clock and is never declared
      // lost by its client (it reconnects as itself); one holding something is, at its deadline.
      const bHeld = await b.acquire('r1-b');
      const waiting = b.acquire('r1', { timeoutMs: 20_000 });
      // c only waits: it holds nothing, so it keeps its session, and its place in the queue.
      const cWaiting = c.acquire('r1-c', { timeoutMs: 20_000 });
      await waitUntil(async () => (await a.contenders('r1')).length === 2, 'b queues');
      await waitUntil(async () => (await a.contenders('r1-c')).length === 2, 'c queues');
      const cNode = (await a.contenders('r1-c'))[1].node;
      const lost = [sessionLost(a), sessionLost(b)];
      let cLost = false;
      c.client.once('session-lost', () => (cLost = true));

      await server.stop('SIGKILL');
      await Promise.all(lost); // each client has told its holders and waiters
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
      await server.start();
      const servingAt = performance.now();
      await waitUntil(() => a.client.session.isConnected && b.client.session.isConnected, 'a and b re-attached');
      // Told lost, but not released: the revived session keeps the holder's node (its work
      // may still run), and b's new attempt waits behind it.
      expect((await a.contenders('r1'))[0].node).toBe(nodeOf(held));
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
      await held.release();

      // b's new attempt is granted while the revived sessions still live: the old holder's node
      // went with its release, the old waiter's with the re-attach, not with the server's expiry.
      const lock = await waiting;
      console.log(
        `restart: the lock granted ${Math.round(performance.now() - servingAt)} ms after the server served again`,
      );
      await held.releaseConfirmed;
      // The same sessions, given back (an expired one would have come back under a new id),
      // and no other: the server's session table (`dump`) settles on exactly those.
      expect([idOf(a), idOf(b), idOf(c)].sort()).toEqual(before);
      await waitUntil(
        async () => equal(await sessionIds(server.clientPort), before),
        'the server keeps the three sessions only',
      );
      // c was never declared lost: its wait went on in its session, on the node it had queued,
      // granted once a's lost holder released.
      expect(heldForC.signal.aborted).toBe(true);
      await heldForC.release();
      const cLock = await cWaiting;
      expect(cLost).toBe(false);
      expect(nodeOf(cLock)).toBe(cNode);
      await cLock.release();
      await cLock.releaseConfirmed; // b reads on its own connection
      expect((await b.contenders('r1')).map((c) => c.node)).toEqual([nodeOf(lock)]);
      expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
      await lock.release();
      expect(bHeld.signal.aborted).toBe(true); // told lost, its node kept by b's re-attached session
      expect((await b.contenders('r1-b')).map((c) => c.node)).toEqual([nodeOf(bHeld)]);
      await bHeld.release();
      await bHeld.releaseConfirmed;
      expect(await b.contenders('r1-b')).toEqual([]);
      await Promise.all([a.close(), b.close(), c.close()]);
      // Closed with the server's agreement: gone at once, not at their expiry (4 s on).
      await waitUntil(
        async () => (await sessionIds(server.clientPort)).length === 0,
        'no session left',
        SESSION_MS / 2,
      );
    } finally {
      await server.destroy();
    }
  });

  describe('a client cut off', () => {
    let proxy: TcpProxy;
    beforeEach(async () => {
      proxy = new TcpProxy(zkPort());
      await proxy.start();
    });
    afterEach(() => proxy.stop());

    const viaProxy = () => fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });

    /** A holder through the proxy, and another client queued behind it on `name`. */
    const holderAndWaiter = async (name: string) => {
      const holder = await viaProxy();
      const [other] = await fx.many(1);
      const sessionId = idOf(holder);
      const held = await holder.acquire(name);
      const waiting = other.acquire(name, { timeoutMs: 20_000 });
      await fx.queued(name, 2);
      return { holder, sessionId, held, waiting };
    };

    it("past its deadline, back before the server expired it: the same session, its waiter's old node deleted first, its holder's kept until released", async () => {
      const holder = await viaProxy();
      const [other] = await fx.many(1);
      const sessionId = idOf(holder);
      const held = await holder.acquire('r2-held');
      const blocking = await other.acquire('r2');
      const waiting = holder.acquire('r2', { timeoutMs: 20_000 });
      await fx.queued('r2', 2);
      const oldWaiterNode = (await fx.nodes('r2'))!.find((node) => node !== nodeOf(blocking))!; // sorted by name, not queue
      const oldWaiterPath = `${holder.pathOf('r2')}/${oldWaiterNode}`;

      // The client's state as the old waiter node's delete passes: not ready while it cleans up.
      const statesAtDelete: string[] = [];
      const log = proxy.requests.push.bind(proxy.requests);
      proxy.requests.push = (...requests) => {
        for (const { op, path } of requests)
          if (op === ZK_OP.delete && path === oldWaiterPath) statesAtDelete.push(holder.status().state);
        return log(...requests);
      };
      // Connected is said once the old node's delete has gone out, not before.
      const deleteSentAtConnected: boolean[] = [];
      holder.client.on('connected', () => deleteSentAtConnected.push(statesAtDelete.length > 0));
      // The server hears the client (its requests touch the session, which it keeps) but no
      // answer comes back: the client proves nothing and declares the session lost. Back
      // then, the re-attach finds it alive (a black hole instead would race the server's
      // expiry, which may come a moment after the client's deadline). The waiter queues
      // again, after the old node's delete.
      proxy.holdReplies();
      await sessionLost(holder);
      const healedAt = proxy.requests.length;
      proxy.releaseReplies();
      await holder.client.session.whenConnected();
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
      expect(idOf(holder)).toBe(sessionId);
      expect((await sessionIds(zkPort())).filter((id) => id === sessionId)).toEqual([sessionId]);
      // The holder's node stays: its owner has not released it.
      expect(await fx.nodes('r2-held')).toEqual([nodeOf(held)]);
      await waitUntil(async () => (await fx.nodes('r2'))?.length === 2, 'the waiter queues again');
      const nodes = await fx.nodes('r2');
      expect(nodes).toContain(nodeOf(blocking));
      expect(nodes).not.toContain(oldWaiterNode);
      const sent = proxy.requests.slice(healedAt);
      const oldDeleted = sent.findIndex((r) => r.op === ZK_OP.delete && r.path === oldWaiterPath);
      const firstCreate = sent.findIndex((r) => r.op === ZK_OP.create);
      expect(oldDeleted).toBeGreaterThanOrEqual(0);
      expect(firstCreate).toBeGreaterThan(oldDeleted);
      expect(sent.some((r) => r.op === ZK_OP.delete && r.path === held.path)).toBe(false);
      expect(statesAtDelete).toEqual(['disconnected']);
      expect(deleteSentAtConnected).toEqual([true]);
      // Released: deleted through the re-attached session object, and confirmed.
      await held.release();
      await held.releaseConfirmed;
      expect(proxy.requests.slice(healedAt).some((r) => r.op === ZK_OP.delete && r.path === held.path)).toBe(true);
      expect(await fx.inspector.children(holder.pathOf('r2-held'))).toBeNull(); // the directory went with it
      await blocking.release();
      const mine = await waiting;
      expect(mine.fencingToken).toBeGreaterThan(blocking.fencingToken);
      await mine.release();
    });

    it('a create whose reply was lost as the link went: the re-attach finds its node by guid and deletes it, so it blocks nobody', async () => {
      const holder = await viaProxy();
      const [other] = await fx.many(1);
      const held = await holder.acquire('r4-held'); // holding: the client watches its session's clock
      const blocking = await other.acquire('r4');
      // The create reaches the server, which makes the node; its reply is lost with the link,
      // which then stays silent until the client gives the session up.
      const cut = proxy.cutAfter(ZK_OP.create).then(() => proxy.blackhole());
      const waiting = holder.acquire('r4', { timeoutMs: 30_000 });
      await cut;
      const create = proxy.requests.findLast((r) => r.op === ZK_OP.create)!;
      const orphanPrefix = create.path!.slice(create.path!.lastIndexOf('/') + 1);
      const orphans = async () => ((await fx.nodes('r4')) ?? []).filter((node) => node.startsWith(orphanPrefix));
      expect(await orphans()).toHaveLength(1); // the server made it

      await sessionLost(holder);
      proxy.heal();
      await holder.client.session.whenConnected(); // re-attached, and done deleting what the lost object left
      expect(await orphans()).toEqual([]);
      // The waiter queued again behind the holder: granted once the holder releases.
      await blocking.release();
      const mine = await waiting;
      expect(await fx.nodes('r4')).toEqual([nodeOf(mine)]);
      await Promise.all([mine.release(), held.release()]);
    });

    it("past the point its locks are lost but within its deadline: the same session, the lost lock's and lease's nodes kept until released", async () => {
      const { holder, sessionId, held, waiting } = await holderAndWaiter('r3');
      const [other] = await fx.many(1);
      const lease = await holder.acquireLease('q3', { maxLeases: 1 });
      const leaseWaiting = other.acquireLease('q3', { maxLeases: 1, timeoutMs: 20_000 });
      await fx.queued('q3', 2);

      const recovered = once(holder.client, 'recovered');
      proxy.blackhole();
      await once(held.signal, 'abort');
      proxy.heal();
      await recovered;
      expect([held.signal.reason, lease.signal.reason]).toEqual([expect.any(LockLostError), expect.any(LockLostError)]);
      expect(holder.client.session.isLost).toBe(false);
      expect(idOf(holder)).toBe(sessionId);
      // Read through the holder's session, behind anything it sent: both nodes are still there.
      expect((await holder.contenders('r3'))[0].node).toBe(nodeOf(held));
      expect((await holder.leaseContenders('q3'))[0].node).toBe(lease.path.slice(lease.path.lastIndexOf('/') + 1));
      // Granted once released, without the session ending.
      await Promise.all([held.release(), lease.release()]);
      const [lock, leased] = await Promise.all([waiting, leaseWaiting]);
      expect(await fx.nodes('r3')).toEqual([nodeOf(lock)]);
      expect(await fx.nodes('q3')).toEqual([leased.path.slice(leased.path.lastIndexOf('/') + 1)]);
      await Promise.all([lock.release(), leased.release()]);
    });

    it("a kept hold's marker outlives a re-attach of its session, as a held lock node does: every caller still honours it, and its holder deletes it at the hold's end", async () => {
      const HOLD_MS = 15_000;
      const holder = await viaProxy();
      const sessionId = idOf(holder);
      const keptAt = performance.now();
      await new ReentrantLocker(holder, 10_000).withLock('r4', () => 'ran', { holdAtLeastMs: HOLD_MS });
      const [marker] = (await fx.nodes('r4')) ?? [];
      expect(marker).toMatch(KEPT_HOLD_MARKER);
      const held = await holder.acquire('r4-held'); // a holder at risk: the client watches its session
      proxy.blackhole();
      await sessionLost(holder);
      proxy.heal();
      await (await holder.acquire('r4-after', { timeoutMs: 10_000 })).release(); // the re-attach has settled
      expect(idOf(holder)).toBe(sessionId);
      expect(await sessionIds(zkPort())).toContain(sessionId);
      const path = `${holder.pathOf('r4')}/${marker}`;
      expect(await fx.inspector.exists(path)).toBe(true);
      const [other] = await fx.many(1);
      expect(await other.tryAcquire('r4')).toBeNull(); // a plain try, during the hold
      await waitUntil(
        async () => !(await fx.inspector.exists(path)),
        'the marker deleted by its holder',
        HOLD_MS + 10_000,
      );
      expect(performance.now()).toBeGreaterThanOrEqual(keptAt + HOLD_MS);
      await held.release();
    });
  });
});
