import type { ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { zkConnect } from '../support/zk-test-env';
import { CuratorClient } from './curator-client';
import { KazooClient } from './kazoo-client';

/**
 * Java services on Apache Curator 5 (Debian's libcurator-recipes-java) and this library
 * on one lock: one FIFO line, Curator's read/write downgrade, revocation both ways, our
 * listings showing Curator's nodes, and Curator, Kazoo and us in one directory.
 */
describe('interoperability with Curator', () => {
  let fx: LockFixture;
  let curator: CuratorClient;
  let ours: ZkLockBackend;
  let slots = 0;
  beforeAll(async () => {
    fx = await LockFixture.create('curator');
    ours = await fx.backend({ identity: 'node-service' });
    curator = await CuratorClient.start(zkConnect());
  });
  afterAll(async () => {
    await curator?.stop();
    await fx.cleanup();
  });

  /** A new Curator lock on `name`'s path, in a slot (a thread) of its own. */
  const curatorLock = async (type: 'mutex' | 'rw', name: string): Promise<string> => {
    const slot = `c${++slots}`;
    await curator.lock(slot, type, ours.pathOf(name));
    return slot;
  };
  /** Settles in the order things happen. */
  const order: string[] = [];
  const noted = <T>(label: string, work: Promise<T>): Promise<T> => work.then((value) => (order.push(label), value));

  it('Curator InterProcessMutex and our curator-mutex lock queue in one FIFO line', async () => {
    order.length = 0;
    const [first, last] = [await curatorLock('mutex', 'fifo'), await curatorLock('mutex', 'fifo')];
    expect(await curator.acquire(first, 'mutex', 0)).toBe(true);
    const oursWaits = noted('ours', ours.acquire('fifo', { nodeFormat: 'curator-mutex', timeoutMs: 10_000 }));
    await fx.queued('fifo', 2);
    const curatorWaits = noted('curator', curator.acquire(last, 'mutex', 10_000));
    await fx.queued('fifo', 3);

    await curator.release(first, 'mutex');
    const lock = await oursWaits; // next in line: ours, though a Curator client waits too
    expect(order).toEqual(['ours']);
    expect((await ours.contenders('fifo')).map((c) => [c.format, c.holding])).toEqual([
      ['curator-mutex', true],
      ['curator-mutex', false],
    ]);
    await lock.release();
    expect(await curatorWaits).toBe(true);
    expect(order).toEqual(['ours', 'curator']);
    await curator.release(last, 'mutex');
    expect((await fx.nodes('fifo')) ?? []).toEqual([]);
  });

  it("our reader shares with a Curator writer's downgrade read once the write lock goes", async () => {
    const slot = await curatorLock('rw', 'downgrade-read');
    expect(await curator.acquire(slot, 'write', 0)).toBe(true);
    const reader = ours.acquire('downgrade-read', { mode: 'read', nodeFormat: 'curator-rw', timeoutMs: 10_000 });
    await fx.queued('downgrade-read', 2);
    expect(await curator.acquire(slot, 'read', 0)).toBe(true); // the downgrade: granted to the thread holding the write lock

    await curator.release(slot, 'write');
    const lock = await reader; // Curator still holds its read
    expect((await ours.contenders('downgrade-read')).map((c) => [c.mode, c.format, c.holding])).toEqual([
      ['read', 'curator-rw', true],
      ['read', 'curator-rw', true],
    ]);
    await lock.release();
    await curator.release(slot, 'read');
    expect((await fx.nodes('downgrade-read')) ?? []).toEqual([]);
  });

  /**
   * Curator 5.4 takes a downgrade read as a new sequential node, behind any writer already
   * waiting; when the write lock goes, that writer is first in line and holds beside the
   * downgraded reader. Curator's own waiting writer does so too: this is the protocol's
   * behaviour, which ours follows (later Curator releases number the read node as the
   * writer's; lock-queue.spec covers that form).
   */
  it.each(['ours', 'Curator'])(
    "Curator 5.4's downgrade read queues behind a waiting writer: %s is granted beside it",
    async (who) => {
      const name = `downgrade-${who}`;
      const slot = await curatorLock('rw', name);
      const other = await curatorLock('rw', name);
      expect(await curator.acquire(slot, 'write', 0)).toBe(true);
      const writer =
        who === 'ours'
          ? ours.acquire(name, { nodeFormat: 'curator-rw', timeoutMs: 10_000 })
          : curator.acquire(other, 'write', 10_000);
      await fx.queued(name, 2);
      expect(await curator.acquire(slot, 'read', 0)).toBe(true);
      const [downgrade] = (await fx.nodes(name))!.filter((node) => node.includes('__READ__'));
      expect(Number(downgrade.slice(-10))).toBe(2); // after the waiting writer's

      await curator.release(slot, 'write');
      const granted = await writer; // while the downgraded reader still holds
      expect(await fx.inspector.exists(`${ours.pathOf(name)}/${downgrade}`)).toBe(true);
      if (typeof granted === 'boolean') await curator.release(other, 'write');
      else await granted.release();
      await curator.release(slot, 'read');
    },
  );

  it('acquireAll in "curator-mutex" waits for the name a Curator client holds, and holds none of the later ones meanwhile', async () => {
    const slot = await curatorLock('mutex', 'group-b');
    expect(await curator.acquire(slot, 'mutex', 0)).toBe(true);
    const group = ours.acquireAll(['group-a', 'group-b', 'group-c'], {
      nodeFormat: 'curator-mutex',
      timeoutMs: 10_000,
    });
    await fx.queued('group-b', 2);
    // The first try created all three nodes at once; the later name is given back before the wait.
    await waitUntil(async () => ((await fx.nodes('group-c')) ?? []).length === 0, 'group-c is given back');
    expect((await fx.nodes('group-a'))!).toHaveLength(1); // held, before the blocked name
    await curator.release(slot, 'mutex');
    const held = await group;
    for (const name of held.names)
      expect((await ours.contenders(name)).map((c) => [c.format, c.holding])).toEqual([['curator-mutex', true]]);
    await held.release();
  });

  it("requestRevocation reaches a revocable Curator holder, and Curator's Revoker reaches ours", async () => {
    const slot = await curatorLock('mutex', 'revoke-them');
    await curator.send('revocable', slot, 'mutex');
    expect(await curator.acquire(slot, 'mutex', 0)).toBe(true);
    expect(await ours.requestRevocation('revoke-them')).toBe(1);
    await waitUntil(
      async () => (await curator.send('revocations', slot)).count === 1,
      "Curator's revocation listener runs",
    );
    await curator.release(slot, 'mutex');

    const lock = await ours.acquire('revoke-us', { nodeFormat: 'curator-mutex', revocable: true, timeoutMs: 0 });
    expect(lock.revocation.aborted).toBe(false);
    await curator.send('revoke', lock.path);
    await waitUntil(() => lock.revocation.aborted, 'our revocation signal aborts');
    expect(lock.isHeld()).toBe(true); // cooperative: held until we release
    await lock.release();
  });

  it("contenders() and locks() show Curator's nodes with the data Curator writes (the host's address)", async () => {
    const slot = await curatorLock('rw', 'listed');
    expect(await curator.acquire(slot, 'read', 0)).toBe(true);
    const lock = await ours.acquire('listed', { mode: 'read', nodeFormat: 'curator-rw', timeoutMs: 0 });
    const [theirs, mine] = await ours.contenders('listed');
    expect(theirs).toMatchObject({ mode: 'read', format: 'curator-rw', holding: true });
    expect(theirs.identity).toMatch(/^\d{1,3}(\.\d{1,3}){3}$|^[0-9a-f:]+$/); // Curator's default node data: the local IP address
    expect(mine).toMatchObject({
      mode: 'read',
      format: 'curator-rw',
      holding: true,
      identity: 'node-service',
      node: nodeOf(lock),
    });
    const [listed] = await ours.locks('listed');
    expect(listed).toMatchObject({ kind: 'lock', name: 'listed', waiters: [] });
    expect(listed.holders.map((h) => h.identity)).toEqual([theirs.identity, 'node-service']);
    await lock.release();
    await curator.release(slot, 'read');
  });

  it('in one directory with a Curator holder and a Kazoo holder (which ignore each other), our default-format lock waits for both', async () => {
    order.length = 0;
    const kazoo = await KazooClient.start(zkConnect());
    try {
      const path = ours.pathOf('three');
      const slot = await curatorLock('mutex', 'three');
      expect(await curator.acquire(slot, 'mutex', 0)).toBe(true);
      // Kazoo's Lock sorts Curator's node last and takes the lock beside it: their two formats do not meet.
      expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: false })).toMatchObject({
        acquired: true,
      });
      const waiting = noted('ours', ours.acquire('three', { timeoutMs: 10_000 }));
      await fx.queued('three', 3);
      expect((await ours.contenders('three')).map((c) => [c.format, c.holding])).toEqual([
        ['curator-mutex', true],
        ['kazoo', false],
        ['kazoo', false],
      ]);
      await curator.release(slot, 'mutex');
      await waitUntil(async () => (await fx.nodes('three'))?.length === 2, "Curator's node goes");
      expect(order).toEqual([]); // the Kazoo holder still blocks us
      await kazoo.send({ op: 'release', path });
      await (await waiting).release();
      expect(order).toEqual(['ours']);
    } finally {
      await kazoo.stop();
    }
  });
});
