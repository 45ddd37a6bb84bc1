import {
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ZkLockError,
  type ZkLockBackend,
} from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/zookeeper/lease';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

const LEASE_NODE = /^[0-9a-f]{32}__lease__\d{10}$/;
const seq = (node: string): number => Number(node.slice(-10));
const nodeOfPath = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** Leases against a real ZooKeeper: what the API answers, and what ZooKeeper holds meanwhile. */
describe('leases (a semaphore of maxLeases holders)', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('lease')));
  afterAll(() => fx.cleanup());

  /**
   * Whether ZooKeeper still tells `client` of changes to `dir`'s children (`wchc` lists data
   * watches only): a probe child is added, then the client makes a read, answered only
   * after any notification the server sent it.
   */
  async function watchesChildren(client: ZkLockBackend, dir: string): Promise<boolean> {
    const before = client.client.counter.snapshot().notification ?? 0;
    await fx.inspector.create(`${dir}/probe`);
    await client.client.session.exists(dir);
    const told = (client.client.counter.snapshot().notification ?? 0) > before;
    await fx.inspector.removeTree(`${dir}/probe`);
    return told;
  }

  /** Lease nodes of `name`, in queue order. */
  const queue = async (name: string): Promise<string[]> =>
    ((await fx.nodes(name)) ?? []).sort((a, b) => seq(a) - seq(b));

  it('grants maxLeases holders at once, queues the next in FIFO order, and names its nodes <guid>__lease__<seq> with the identity as data', async () => {
    const clients = await fx.many(6, { identity: 'lease-test' });
    const dir = clients[0].pathOf('pool');
    const holders = await Promise.all(clients.slice(0, 3).map((c) => c.acquireLease('pool', { maxLeases: 3 })));
    expect(holders.map((h) => [h.name, h.maxLeases, h.released, h.isHeld()])).toEqual(
      Array(3).fill(['pool', 3, false, true]),
    );

    const nodes = await queue('pool');
    expect(nodes).toHaveLength(3);
    for (const node of nodes) expect(node).toMatch(LEASE_NODE);
    expect(await fx.inspector.data(`${dir}/${nodes[0]}`)).toBe('lease-test');
    expect(JSON.parse((await fx.inspector.data(dir))!)).toEqual({ kind: 'nestjs-zk-lock/lease', maxLeases: 3 });

    const order: number[] = [];
    const waits: Promise<ZkLeaseHandle>[] = [];
    for (const i of [3, 4, 5]) {
      waits.push(
        clients[i].acquireLease('pool', { maxLeases: 3, timeoutMs: 20_000 }).then((lease) => (order.push(i), lease)),
      );
      await fx.queued('pool', i + 1); // the next one queues strictly after this one
    }
    expect(order).toEqual([]);
    await holders[1].release(); // any holder leaving lets the first waiter in
    const fourth = await waits[0];
    expect(order).toEqual([3]);
    await holders[0].release();
    await holders[2].release();
    const rest = await Promise.all(waits.slice(1));
    expect(order).toEqual([3, 4, 5]);
    await Promise.all([fourth, ...rest].map((lease) => lease.release()));
    expect(await fx.nodes('pool')).toBeNull(); // the directory goes with the last lease
  });

  it('timeoutMs 0 rejects with LockTimeoutError at once when no lease is free, and leaves no node and no watch', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquireLease('try', { maxLeases: 1 });
    const before = b.client.counter.snapshot();
    const error = await b.acquireLease('try', { maxLeases: 1, timeoutMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', lockName: 'try', mode: 'lease', timeoutMs: 0 });
    expect((error as Error).message).toContain('All 1 leases of "try" are held');
    const after = b.client.counter.snapshot();
    // Its first call on this semaphore reads the directory's data; then one create and one
    // children read (the two deletes: its node, and the directory in case it fell empty).
    const delta = (op: string): number => (after[op] ?? 0) - (before[op] ?? 0);
    expect([delta('getData'), delta('create'), delta('getChildren'), delta('remove')]).toEqual([1, 1, 1, 2]);
    expect(await queue('try')).toEqual([nodeOfPath(held.path)]);
    expect(b.client.session.watcherCount()).toBe(0);
    expect((await watchedPaths(zkPort(), a.pathOf('try'))).size).toBe(0); // no data watch
    expect(await watchesChildren(b, a.pathOf('try'))).toBe(false); // and no children watch
    await held.release();
  });

  it('a timed-out or aborted wait rejects with LockTimeoutError / LockAbortedError and leaves no node and no listener', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquireLease('give-up', { maxLeases: 1 });
    const timedOut = await b.acquireLease('give-up', { maxLeases: 1, timeoutMs: 150 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect((timedOut as Error).message).toContain(
      'Timed out after 150 ms waiting for one of the 1 leases of "give-up"',
    );
    expect(await queue('give-up')).toEqual([nodeOfPath(held.path)]);

    const controller = new AbortController();
    const waiting = b.acquireLease('give-up', { maxLeases: 1, signal: controller.signal }).catch((e: unknown) => e);
    await fx.queued('give-up', 2);
    await waitUntil(() => watchesChildren(b, a.pathOf('give-up')), 'b, the head, watches the children');
    await waitUntil(() => b.client.session.watcherCount() === 1, 'b waits on its watch again');
    const reason = new Error('user gave up');
    controller.abort(reason);
    const aborted = await waiting;
    expect(aborted).toBeInstanceOf(LockAbortedError);
    expect((aborted as LockAbortedError).cause).toBe(reason);
    expect(await queue('give-up')).toEqual([nodeOfPath(held.path)]);
    expect(b.client.session.watcherCount()).toBe(0);
    // b was the head (children watch): that watch went with its own node's delete. ZooKeeper
    // holds no watch of b's here, data or children.
    expect((await watchedPaths(zkPort(), a.pathOf('give-up'))).size).toBe(0);
    expect(await watchesChildren(b, a.pathOf('give-up'))).toBe(false);
    await held.release();
  });

  it('an already aborted signal sends nothing to ZooKeeper', async () => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    const error = await a
      .acquireLease('pre-aborted', { maxLeases: 2, signal: AbortSignal.abort('no') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAbortedError);
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.nodes('pre-aborted')).toBeNull();
  });

  it('release is idempotent (the same promise), `await using` releases, and a released handle asserts', async () => {
    const [a] = await fx.many(1);
    {
      await using lease = await a.acquireLease('dispose', { maxLeases: 1 });
      expect(lease.isHeld()).toBe(true);
      expect(() => lease.assertHeld()).not.toThrow();
    }
    expect(await fx.nodes('dispose')).toBeNull();
    const lease = await a.acquireLease('dispose', { maxLeases: 1, timeoutMs: 0 });
    const first = lease.release();
    expect(lease.release()).toBe(first);
    await first;
    expect(lease.released).toBe(true);
    expect(lease.isHeld()).toBe(false);
    expect(() => lease.assertHeld()).toThrow(LockLostError);
  });

  it('is not reentrant: each call takes one more lease, also in one client', async () => {
    const [a] = await fx.many(1);
    const first = await a.acquireLease('twice', { maxLeases: 2 });
    const second = await a.acquireLease('twice', { maxLeases: 2, timeoutMs: 0 });
    expect(await queue('twice')).toHaveLength(2);
    await expect(a.acquireLease('twice', { maxLeases: 2, timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await Promise.all([first.release(), second.release()]);
  });

  it('leaseContenders lists holders and waiters in queue order with their identities', async () => {
    const [a, b, c] = await Promise.all(['one', 'two', 'three'].map((identity) => fx.backend({ identity })));
    expect(await a.leaseContenders('listed')).toEqual([]);
    const held = [await a.acquireLease('listed', { maxLeases: 2 }), await b.acquireLease('listed', { maxLeases: 2 })];
    const waiting = c.acquireLease('listed', { maxLeases: 2, timeoutMs: 20_000 });
    await fx.queued('listed', 3);
    const listed = await c.leaseContenders('listed');
    expect(listed.map((x) => [x.identity, x.holding])).toEqual([
      ['one', true],
      ['two', true],
      ['three', false],
    ]);
    expect(listed.map((x) => x.node)).toEqual(await queue('listed'));
    expect(listed.map((x) => x.sequence)).toEqual((await queue('listed')).map(seq));
    await held[0].release();
    const third = await waiting;
    await Promise.all([held[1].release(), third.release()]);
  });

  it('close() cancels lease waits with LockClientClosedError and releases held leases at once', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquireLease('closing', { maxLeases: 1 });
    const otherHeld = await b.acquireLease('closing-2', { maxLeases: 1 });
    const aWaits = a.acquireLease('closing-2', { maxLeases: 1 }).catch((e: unknown) => e);
    await fx.queued('closing-2', 2);
    const bWaits = b.acquireLease('closing', { maxLeases: 1, timeoutMs: 10_000 });
    await fx.queued('closing', 2);

    await a.close();
    expect(await aWaits).toBeInstanceOf(LockClientClosedError);
    expect(held.released).toBe(true);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    const got = await bWaits; // handed on at once, not after a session timeout
    expect(await queue('closing-2')).toHaveLength(1);
    await expect(a.acquireLease('closing', { maxLeases: 1 })).rejects.toBeInstanceOf(LockClientClosedError);
    await Promise.all([got.release(), otherHeld.release()]);
  });

  it('an uncontended acquire and release cost one create, one children read and one delete, as a lock does', async () => {
    const [a] = await fx.many(1, { emptyDirectoryGraceMs: 60_000 });
    await (await a.acquireLease('hot', { maxLeases: 4 })).release(); // the directory exists, and was checked
    const before = a.client.counter.snapshot();
    const lease = await a.acquireLease('hot', { maxLeases: 4 });
    await lease.release();
    const after = a.client.counter.snapshot();
    const delta = Object.fromEntries(
      Object.keys(after)
        .filter((op) => op !== 'heartbeat' && after[op] !== (before[op] ?? 0))
        .map((op) => [op, after[op] - (before[op] ?? 0)]),
    );
    expect(delta).toEqual({ create: 1, getChildren: 1, remove: 1 });
    await a.close();
    expect(await fx.nodes('hot')).toBeNull(); // swept at close
  });

  it("the lost-lease signal aborts when the holder's session is lost, and the lease passes on", async () => {
    const holder = await fx.expirable();
    const [waiter] = await fx.many(1);
    const held = await holder.acquireLease('expiry', { maxLeases: 1 });
    const waiting = waiter.acquireLease('expiry', { maxLeases: 1, timeoutMs: 15_000 });
    await fx.queued('expiry', 2);
    await fx.expire(holder);
    const lease = await waiting;
    await waitUntil(() => held.signal.aborted, 'the old holder learns its lease is lost');
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect(held.isHeld()).toBe(false);
    await held.release(); // a no-op, not an error
    expect(await queue('expiry')).toEqual([nodeOfPath(lease.path)]);
    await lease.release();
  });
});
