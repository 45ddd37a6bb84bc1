import type { ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

describe('fair order without a herd', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('fifo')));
  afterAll(() => fx.cleanup());

  it('grants waiters in the order they queued (FIFO)', async () => {
    const clients = await fx.many(6);
    const holder = await clients[0].acquire('fifo');
    const order: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 1; i < clients.length; i++) {
      waits.push(
        clients[i].acquire('fifo', { timeoutMs: 20_000 }).then(async (lock) => {
          order.push(i);
          await lock.release();
        }),
      );
      await fx.queued('fifo', i + 1); // the next one queues strictly after this one
    }
    await holder.release();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('wakes exactly one waiting writer on release, and each waiter watches only its predecessor', async () => {
    const [holderClient, ...waiters] = await fx.many(6);
    const holder = await holderClient.acquire('herd');
    const grants: ZkLockBackend[] = [];
    const waits = waiters.map((client) =>
      client.acquire('herd', { timeoutMs: 20_000 }).then((lock) => {
        grants.push(client);
        return lock;
      }),
    );
    await fx.queued('herd', 6);
    const dir = holderClient.pathOf('herd');
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 5, 'all five waiters watch');

    // ZooKeeper's watch table: five watched nodes (every node but the last), one watcher each.
    const nodes = (await fx.nodes('herd'))!.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
    const watched = await watchedPaths(zkPort(), dir);
    expect([...watched.keys()].sort()).toEqual(
      nodes
        .slice(0, 5)
        .map((n) => `${dir}/${n}`)
        .sort(),
    );
    expect([...watched.values()]).toEqual([1, 1, 1, 1, 1]);

    const before = waiters.map((c) => c.client.counter.snapshot());
    await holder.release();
    const first = await Promise.race(waits);
    await fx.queued('herd', 5);
    const after = waiters.map((c) => c.client.counter.snapshot());

    // Exactly one notification and one children read in the whole crowd of waiters.
    const delta = (key: string): number[] => after.map((a, i) => (a[key] ?? 0) - (before[i][key] ?? 0));
    expect(delta('notification').reduce((x, y) => x + y)).toBe(1);
    expect(delta('getChildren').reduce((x, y) => x + y)).toBe(1);
    expect(grants).toHaveLength(1);

    // The rest go one by one, each released as soon as it is granted.
    await first.release();
    await Promise.all(waits.map((w) => w.then((lock) => lock.release())));
    expect(grants).toHaveLength(5);
  });
});
