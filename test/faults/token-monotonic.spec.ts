import { once } from 'node:events';

import { LeaderElection, LockLostError, type ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { KazooClient } from '../interop/kazoo-client';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { TokenLedger, type GrantSharing } from '../support/token-ledger';
import { waitUntil } from '../support/wait-until';
import { zkConnect, zkPort } from '../support/zk-test-env';

/** A leader's group; its lock, `leader:<group>`, is the one resource every step below takes. */
const GROUP = 'tokens';
const NAME = `leader:${GROUP}`;

/**
 * One resource, one sequence of grants through everything that can happen to its directory:
 * swept and made again, a change of kind (write lock, read locks, leases, a lock again), a
 * multi-lock, leaders' terms, an expired session, a session declared lost and re-attached,
 * Kazoo holding the lock in between. Each token is checked against the rule of
 * docs/fencing.md ("A token never goes down", see `TokenLedger`) and against ZooKeeper's
 * own state: a held token is at most the directory's pzxid (equal while it holds alone), and
 * above the pzxid read once the grants before it were released.
 */
describe('a fencing token never goes down for a resource', () => {
  let fx: LockFixture;
  let kazoo: KazooClient;
  let proxy: TcpProxy;
  beforeAll(async () => {
    fx = await LockFixture.create('tokens');
    kazoo = await KazooClient.start(zkConnect());
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterAll(async () => {
    await kazoo.stop();
    await fx.cleanup();
    await proxy.stop();
  });

  it('across directory sweeps, kind changes, readers, leases, a multi-lock, leaders, an expiry, a re-attach and Kazoo', async () => {
    const ledger = new TokenLedger();
    const a = await fx.expirable(); // its session can be expired on purpose
    const [b, c] = await fx.many(2); // directories swept with the release
    const keeper = await fx.backend({ removeEmptyDirectories: false }); // an idle directory stays: kind changes meet it
    const reattaching = await fx.backend({ connectionString: proxy.connectionString });
    const dir = b.pathOf(NAME);
    /** The directory's pzxid once the grants before were released (or the last seen, if it is gone). */
    let floor = -1n;

    /** An acquire about to be called: the grants and the floor before it. */
    const call = () => ({ index: ledger.call(), floor });
    /**
     * Records a grant, checks it against ZooKeeper's state; `alone`: nobody else has a node
     * in the directory; `called`: when its acquire was called, if not just now.
     */
    const granted = async (
      label: string,
      sharing: GrantSharing,
      token: bigint,
      { alone = false, called = call() } = {},
    ): Promise<void> => {
      ledger.grant(label, sharing, token, called.index);
      expect(token).toBeGreaterThan(called.floor);
      const pzxid = await fx.inspector.childrenZxid(dir);
      if (pzxid === null) throw new Error(`${label}: ${dir} is gone while held`);
      expect(token).toBeLessThanOrEqual(pzxid);
      if (alone) expect(token).toBe(pzxid);
    };
    /** Releases, waits for ZooKeeper to confirm, and reads the new floor. */
    const released = async (...handles: Array<{ release(): Promise<void>; releaseConfirmed: Promise<void> }>) => {
      await Promise.all(handles.map((handle) => handle.release()));
      await Promise.all(handles.map((handle) => handle.releaseConfirmed));
      await fx.releasesConfirmed();
      floor = (await fx.inspector.childrenZxid(dir)) ?? floor;
    };
    const write = async (client: ZkLockBackend, label: string): Promise<ZkLockHandle> => {
      const lock = await client.acquire(NAME);
      await granted(label, 'exclusive', lock.fencingToken, { alone: true });
      return lock;
    };

    // Swept and made again: the sequence numbers start over, the token does not.
    const first = await write(a, 'a: write');
    await released(first);
    expect(await fx.nodes(NAME)).toBeNull();
    const again = await write(b, 'b: write, directory made again');
    expect(nodeOf(again).slice(-10)).toBe(nodeOf(first).slice(-10));
    await released(again);

    // Readers: each above every grant before its call; the writer behind them above both.
    const r1 = await keeper.acquire(NAME, { mode: 'read' });
    await granted('keeper: read', 'shared', r1.fencingToken, { alone: true });
    const r2 = await b.acquire(NAME, { mode: 'read' });
    await granted('b: read beside it', 'shared', r2.fencingToken);
    const called = call();
    const writer = a.acquire(NAME, { timeoutMs: 20_000 });
    await fx.queued(NAME, 3);
    await released(r1, r2);
    const w = await writer;
    await granted('a: write behind the readers', 'exclusive', w.fencingToken, { alone: true, called });
    await released(w);

    // Kind changes on a directory that stays: lock → lease of 1 → leases of 2 → lock.
    await released(await write(keeper, 'keeper: write, directory kept'));
    const solo = await keeper.acquireLease(NAME, { maxLeases: 1 });
    await granted('keeper: lease of 1', 'exclusive', solo.fencingToken, { alone: true });
    await released(solo);
    const l1 = await keeper.acquireLease(NAME, { maxLeases: 2 });
    await granted('keeper: lease of 2', 'shared', l1.fencingToken, { alone: true });
    const l2 = await keeper.acquireLease(NAME, { maxLeases: 2 });
    await granted('keeper: lease of 2 beside it', 'shared', l2.fencingToken);
    await released(l1, l2);
    await released(await write(keeper, 'keeper: write, a lock again'));
    await fx.inspector.removeTree(dir); // what a grace-period sweep would do

    // A multi-lock: a token per name.
    const group = await c.acquireAll([NAME, `${NAME}-other`]);
    const mine = group.handles[group.names.indexOf(NAME)];
    await granted('c: multi-lock', 'exclusive', mine.fencingToken, { alone: true });
    await released(group);

    // Leaders' terms: the leader lock is the resource; a term handed on rises.
    const leaders = [new LeaderElection(b, GROUP, { retryDelayMs: 20 }), new LeaderElection(c, GROUP)];
    leaders[0].start();
    await waitUntil(() => leaders[0].isLeader, 'b leads');
    await granted('b: leader', 'exclusive', leaders[0].fencingToken!, { alone: true });
    const handedOn = call();
    leaders[1].start();
    await fx.queued(NAME, 2);
    await leaders[0].stop();
    await waitUntil(() => leaders[1].isLeader, 'c leads');
    await granted('c: leader after b stepped down', 'exclusive', leaders[1].fencingToken!, {
      alone: true,
      called: handedOn,
    });
    await leaders[1].stop();
    await released();

    // An expired session: the server deletes its node; the next holder is above it.
    const doomed = await write(a, 'a: write, then expired');
    const expiryCalled = call();
    const afterExpiry = b.acquire(NAME, { timeoutMs: 20_000 });
    await fx.queued(NAME, 2);
    await fx.expire(a);
    const survivor = await afterExpiry;
    await waitUntil(() => doomed.signal.aborted, 'the expired holder learns its lock is lost');
    expect(doomed.signal.reason).toBeInstanceOf(LockLostError);
    await granted('b: write after the expiry', 'exclusive', survivor.fencingToken, {
      alone: true,
      called: expiryCalled,
    });
    await released(survivor, doomed);

    // A session declared lost by its client and re-attached: its node stays until released.
    const held = await write(reattaching, 'reattaching: write');
    const reattachCalled = call();
    const waiting = c.acquire(NAME, { timeoutMs: 20_000 });
    await fx.queued(NAME, 2);
    proxy.holdReplies(); // the server hears the client, which hears nothing: it gives the session up
    await once(reattaching.client, 'session-lost');
    proxy.releaseReplies();
    await reattaching.client.session.whenConnected();
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect((await c.contenders(NAME))[0].node).toBe(nodeOf(held));
    await released(held);
    const next = await waiting;
    await granted('c: write after the re-attach', 'exclusive', next.fencingToken, {
      alone: true,
      called: reattachCalled,
    });
    await released(next);
    await released(await write(reattaching, 'reattaching: write again, on the re-attached session'));

    // Kazoo holds the lock in between (its nodes move the pzxid too), and makes the directory again.
    const path = dir;
    expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: false })).toMatchObject({ acquired: true });
    const kazooCalled = call();
    const behindKazoo = b.acquire(NAME, { timeoutMs: 20_000 });
    await fx.queued(NAME, 2);
    const whileKazoo = (await fx.inspector.childrenZxid(dir))!;
    expect(whileKazoo).toBeGreaterThan(ledger.highest);
    await kazoo.send({ op: 'release', path });
    const afterKazoo = await behindKazoo;
    expect(afterKazoo.fencingToken).toBeGreaterThan(whileKazoo);
    await granted('b: write after Kazoo', 'exclusive', afterKazoo.fencingToken, { alone: true, called: kazooCalled });
    await released(afterKazoo);

    expect(ledger.tokens.length).toBe(19);
  });
});
