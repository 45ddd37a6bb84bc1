import type { ZkLockBackend, ZkLockOptions } from '../../lib/index';
import { LeaseLimitMismatchError, LockKindMismatchError } from '../../lib/core/errors/errors';
import { changeIdleDirectory, readDirectory } from '../../lib/core/zookeeper/queue/directory-kind-change';
import { Stop } from '../../lib/core/util/stop';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

const marker = (maxLeases: number): string => JSON.stringify({ kind: 'nestjs-zk-lock/lease', maxLeases });

/**
 * A name nobody holds or awaits changes kind (lock ↔ lease) and lease count on ZooKeeper
 * as in memory, at once, also with the directory kept (`removeEmptyDirectories: false`, as
 * Kazoo users run) or within its grace period; ZooKeeper's own state shows what the name is
 * now (the directory's data). A name someone holds or awaits is refused, leaving nothing.
 */
describe.each<[string, Partial<ZkLockOptions>]>([
  ['directories kept (removeEmptyDirectories: false)', { removeEmptyDirectories: false }],
  ['directories removed after their grace period (the default 1 s)', { emptyDirectoryGraceMs: 1000 }],
])('a name changes kind and count once idle: %s', (_, options) => {
  let fx: LockFixture;
  let a: ZkLockBackend;
  let b: ZkLockBackend;
  beforeAll(async () => {
    fx = await LockFixture.create('lease-kind-change');
    // Each case hands a name from one client to the other as the other kind: a release that
    // resolves once sent could leave the node in place for the other's call (a brief
    // LockKindMismatchError), so these clients wait for ZooKeeper's answer, as the guide
    // advises for a name changing kind.
    [a, b] = await fx.many(2, { ...options, release: 'confirmed' });
  });
  afterAll(() => fx.cleanup());

  const dataOf = (name: string): Promise<string | null> => fx.inspector.data(a.pathOf(name));

  it('a lease released, then a lock on the same name: granted, and the directory is a lock’s again', async () => {
    await (await a.acquireLease('lease-then-lock', { maxLeases: 2 })).release();
    expect(await dataOf('lease-then-lock')).toBe(marker(2)); // kept: emptied, not yet removed
    const lock = await b.acquire('lease-then-lock', { timeoutMs: 10_000 });
    expect(await dataOf('lease-then-lock')).toBe('');
    expect(await b.contenders('lease-then-lock')).toEqual([expect.objectContaining({ holding: true })]);
    await lock.release();
    // The same client that held the lease takes the lock too (it checked the semaphore before).
    await (await a.acquireLease('lease-then-lock', { maxLeases: 2 })).release();
    await (await a.tryAcquire('lease-then-lock'))!.release();
    expect(await dataOf('lease-then-lock')).toBe('');
  });

  it('a lock released, then a lease: granted, the directory stores the count', async () => {
    await (await a.acquire('lock-then-lease')).release();
    expect(await dataOf('lock-then-lease')).toBe('');
    const lease = await b.acquireLease('lock-then-lease', { maxLeases: 3, timeoutMs: 10_000 });
    expect(await dataOf('lock-then-lease')).toBe(marker(3));
    await lease.release();
  });

  it('a lease of 2 released, then one of 3: granted, the directory stores 3; then 1, by the first client', async () => {
    await (await a.acquireLease('recount', { maxLeases: 2 })).release();
    const three = await b.acquireLease('recount', { maxLeases: 3, timeoutMs: 10_000 });
    expect(await dataOf('recount')).toBe(marker(3));
    // While 3 is held, 2 is refused: the message says why and what to do.
    const refused = a.acquireLease('recount', { maxLeases: 2, timeoutMs: 10_000 });
    await expect(refused).rejects.toBeInstanceOf(LeaseLimitMismatchError);
    await expect(refused).rejects.toThrow('while it is held or awaited with maxLeases 3');
    expect((await fx.nodes('recount'))!.length).toBe(1); // a's node went
    await three.release();
    // a had checked the directory with 2, and then saw 3: 1 is stored now.
    await (await a.acquireLease('recount', { maxLeases: 1 })).release();
    expect(await dataOf('recount')).toBe(marker(1));
  });

  it('refused while someone holds or awaits, whatever the client saw before; taken once the last one leaves', async () => {
    const holder = await a.acquireLease('busy', { maxLeases: 1 });
    const waiting = a.acquireLease('busy', { maxLeases: 1, timeoutMs: 20_000 });
    await fx.queued('busy', 2);
    await expect(b.acquire('busy', { timeoutMs: 10_000 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      found: 'lease',
      message: expect.stringContaining('while it is held or awaited as a lease semaphore of 1 leases'),
    });
    await expect(b.acquireLease('busy', { maxLeases: 2 })).rejects.toBeInstanceOf(LeaseLimitMismatchError);
    await holder.release();
    const second = await waiting; // held by the one that waited: still refused
    await expect(b.tryAcquire('busy')).rejects.toBeInstanceOf(LockKindMismatchError);
    expect(await fx.nodes('busy')).toHaveLength(1);
    expect(await dataOf('busy')).toBe(marker(1));
    await second.release();
    const lock = await b.acquire('busy', { timeoutMs: 10_000 });
    expect(await dataOf('busy')).toBe('');

    // And the other way: a lock held, and one awaited.
    const queued = a.acquire('busy', { timeoutMs: 20_000 });
    await fx.queued('busy', 2);
    await expect(a.acquireLease('busy', { maxLeases: 2 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      found: 'lock',
      message: expect.stringContaining('while it is held or awaited as a lock'),
    });
    await lock.release();
    await expect(b.acquireLease('busy', { maxLeases: 2, timeoutMs: 0 })).rejects.toMatchObject({ found: 'lock' });
    await (await queued).release();
    await (await b.acquireLease('busy', { maxLeases: 2 })).release();
    expect(await dataOf('busy')).toBe(marker(2));
  });

  it('an idle directory of the other kind lists no contenders, and is not refused by listing calls', async () => {
    await (await a.acquireLease('listed', { maxLeases: 2 })).release();
    expect(await b.contenders('listed')).toEqual([]);
    expect(await b.requestRevocation('listed')).toBe(0);
    await (await a.acquire('listed')).release();
    expect(await b.leaseContenders('listed')).toEqual([]);
  });

  it('nothing is left once the clients leave the names alone', async () => {
    const names = ['lease-then-lock', 'lock-then-lease', 'recount', 'busy', 'listed'];
    if (options.removeEmptyDirectories === false) {
      for (const name of names) expect(await fx.nodes(name)).toEqual([]);
    } else {
      for (const name of names)
        await waitUntil(async () => (await fx.nodes(name)) === null, `${name}'s directory removed`, 10_000);
    }
    expect(a.client.session.watcherCount() + b.client.session.watcherCount()).toBe(0);
  });
});

describe('what a change waits for, and what it lands on', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('lease-kind-stale')));
  afterAll(() => fx.cleanup());

  it('does not land on a directory whose data was rewritten in place since (as Kazoo’s Semaphore writes its count)', async () => {
    const [a, b] = await fx.many(2, { removeEmptyDirectories: false });
    const dir = a.pathOf('rewritten');
    await fx.inspector.create(dir); // an idle lock's directory, as Kazoo's Semaphore first makes it
    const session = a.client.liveSession();
    const read = (await readDirectory(session, dir))!;
    await b.client.liveSession().setData(dir, Buffer.from('3')); // then Kazoo writes its count
    const io = { retrying: <T>(request: () => Promise<T>) => request(), stop: new Stop() };
    await changeIdleDirectory(session, { name: 'rewritten', dir }, { kind: 'lease', maxLeases: 2 }, read, io);
    expect(await fx.inspector.data(dir)).toBe('3'); // refused by the version: read again, Kazoo's
    await expect(a.acquireLease('rewritten', { maxLeases: 2 })).rejects.toMatchObject({ found: 'kazoo-semaphore' });
    expect(await fx.inspector.data(dir)).toBe('3');
  });

  it('a node of a caller of the other kind is not a holder: the change waits for it to go, then lands', async () => {
    const [a] = await fx.many(1, { removeEmptyDirectories: false });
    await (await a.acquireLease('passing', { maxLeases: 2 })).release();
    const dir = a.pathOf('passing');
    // A lock caller's node, about to withdraw (it queues before it reads the directory's data).
    const passing = `${dir}/${'0'.repeat(32)}__lock__0000000009`;
    expect(await fx.inspector.attempt('create', passing)).toBe('ok');
    let granted = false;
    const lease = a.acquireLease('passing', { maxLeases: 3, timeoutMs: 20_000 }).finally(() => (granted = true));
    await waitUntil(() => a.client.session.watcherCount() > 0, 'the change waiting on that node');
    expect(granted).toBe(false);
    expect(await fx.inspector.data(dir)).toBe(marker(2));
    expect(await fx.inspector.attempt('remove', passing)).toBe('ok');
    await (await lease).release();
    expect(await fx.inspector.data(dir)).toBe(marker(3));
    expect(a.client.session.watcherCount()).toBe(0);
  });
});
