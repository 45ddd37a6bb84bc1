import { InvalidLockNameError, InvalidOptionError, ZkLockError } from '../../lib/index';
import { LeaseLimitMismatchError, LockKindMismatchError } from '../../lib/core/errors/errors';
import { LockFixture } from '../support/lock-fixture';

const KAZOO_UUID = '0123456789abcdef0123456789abcdef';

/**
 * Bad input and mixed-up names: each call fails at once with a typed error, sends nothing
 * (bad input) or leaves nothing behind (a name of another kind or count), as ZooKeeper's
 * own state shows.
 */
describe('leases: bad input, counts that disagree, names of another kind', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('lease-validation')));
  afterAll(() => fx.cleanup());

  const failure = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => new Error('expected a rejection'),
      (error: unknown) => error,
    );

  it.each([
    ['maxLeases 0', { maxLeases: 0 }, 'maxLeases'],
    ['maxLeases 1.5', { maxLeases: 1.5 }, 'maxLeases'],
    ['maxLeases 1001', { maxLeases: 1001 }, 'maxLeases'],
    ['maxLeases "3"', { maxLeases: '3' }, 'maxLeases'],
    ['no maxLeases', {}, 'maxLeases'],
    ['no options', undefined, 'options'],
    ['an unknown key', { maxLeases: 2, mode: 'read' }, 'mode'],
    ['a misspelt key', { maxLeases: 2, timeoutMS: 10 }, 'timeoutMS'],
    ['a negative timeout', { maxLeases: 2, timeoutMs: -5 }, 'timeoutMs'],
  ])('%s: InvalidOptionError naming the option, nothing sent', async (_, options, option) => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    const error = await failure(a.acquireLease('bad-input', options as never));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', option });
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.nodes('bad-input', a)).toBeNull();
  });

  it.each([
    ['', 'it is empty'],
    [42, 'must be a string'],
    ['\ud800', 'lone UTF-16 surrogate'],
  ])('a bad name (%p): InvalidLockNameError, nothing sent', async (name, why) => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    const error = await failure(a.acquireLease(name as never, { maxLeases: 2 }));
    expect(error).toBeInstanceOf(InvalidLockNameError);
    expect((error as Error).message).toContain(why);
    expect(a.client.counter.total()).toBe(before);
  });

  it('another count than the one held: LeaseLimitMismatchError naming both, at once, nothing left behind', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquireLease('count', { maxLeases: 3 });
    const tree = await fx.tree();
    const creates = b.client.counter.snapshot().create ?? 0;
    const error = await failure(b.acquireLease('count', { maxLeases: 5, timeoutMs: 10_000 }));
    expect(error).toBeInstanceOf(LeaseLimitMismatchError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error).toMatchObject({ code: 'LEASE_LIMIT_MISMATCH', lockName: 'count', requested: 5, stored: 3 });
    expect((error as Error).message).toContain('maxLeases 5');
    expect((error as Error).message).toContain('while it is held or awaited with maxLeases 3');
    expect((error as Error).message).toContain(`ZooKeeper directory ${a.pathOf('count')}`);
    expect(b.client.counter.snapshot().create ?? 0).toBe(creates); // refused before creating anything
    expect(await fx.tree()).toEqual(tree);
    // The same client, having held with 3, is refused 4 too.
    await expect(a.acquireLease('count', { maxLeases: 4, timeoutMs: 0 })).rejects.toBeInstanceOf(
      LeaseLimitMismatchError,
    );
    await held.release();
  });

  it('a semaphore made again with another count is read again, even by a client that checked the old one', async () => {
    const [a, b] = await fx.many(2);
    await (await a.acquireLease('recount', { maxLeases: 2 })).release();
    expect(await fx.nodes('recount')).toBeNull(); // idle: its directory (and count) went
    const held = await b.acquireLease('recount', { maxLeases: 3 });
    const error = await failure(a.acquireLease('recount', { maxLeases: 2, timeoutMs: 10_000 }));
    expect(error).toMatchObject({ name: 'LeaseLimitMismatchError', requested: 2, stored: 3 });
    expect(await fx.nodes('recount')).toEqual([held.path.slice(held.path.lastIndexOf('/') + 1)]); // a's node went again
    await held.release();
  });

  it('a lease on a held lock: LockKindMismatchError at once, nothing created; granted on the lock’s empty directory', async () => {
    const [a, b] = await fx.many(2, { emptyDirectoryGraceMs: 60_000 });
    const lock = await a.acquire('used-as-lock');
    const tree = await fx.tree();
    const error = await failure(b.acquireLease('used-as-lock', { maxLeases: 2 }));
    expect(error).toBeInstanceOf(LockKindMismatchError);
    expect(error).toMatchObject({
      code: 'LOCK_KIND_MISMATCH',
      lockName: 'used-as-lock',
      requested: 'lease',
      found: 'lock',
    });
    expect((error as Error).message).toContain('use another name for the semaphore');
    expect(await fx.tree()).toEqual(tree);
    expect(b.client.counter.snapshot().create ?? 0).toBe(0);
    await lock.release();
    expect(await fx.nodes('used-as-lock')).toEqual([]); // kept for a while (the grace period)
    expect(await b.leaseContenders('used-as-lock')).toEqual([]); // idle: nobody to list
    const lease = await b.acquireLease('used-as-lock', { maxLeases: 2 }); // idle: it becomes a semaphore
    expect(await fx.inspector.data(b.pathOf('used-as-lock'))).toBe(
      JSON.stringify({ kind: 'nestjs-zk-lock/lease', maxLeases: 2 }),
    );
    await lease.release();
  });

  it('a lock on a lease semaphore: LockKindMismatchError at once (acquire, tryAcquire, contenders), nothing left behind', async () => {
    const [a, b] = await fx.many(2);
    const lease = await a.acquireLease('used-as-lease', { maxLeases: 2 });
    const tree = await fx.tree();
    for (const call of [
      () => b.acquire('used-as-lease', { timeoutMs: 10_000 }),
      () => b.tryAcquire('used-as-lease'),
      () => b.acquire('used-as-lease', { mode: 'read' }),
      () => b.contenders('used-as-lease'),
    ]) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(LockKindMismatchError);
      expect(error).toMatchObject({ lockName: 'used-as-lease', requested: 'lock', found: 'lease', maxLeases: 2 });
      expect((error as Error).message).toContain('acquireLease("used-as-lease", { maxLeases: 2 })');
      expect(await fx.tree()).toEqual(tree);
    }
    expect(b.client.session.watcherCount()).toBe(0);
    await lease.release();
  });

  it('the check costs a lock nothing: its directory has no data, which the children read already tells', async () => {
    const [a] = await fx.many(1, { emptyDirectoryGraceMs: 60_000 });
    await (await a.acquire('plain-lock')).release();
    const before = a.client.counter.snapshot();
    await (await a.acquire('plain-lock')).release();
    const after = a.client.counter.snapshot();
    const delta = Object.fromEntries(
      Object.keys(after)
        .filter((op) => op !== 'heartbeat' && after[op] !== (before[op] ?? 0))
        .map((op) => [op, after[op] - (before[op] ?? 0)]),
    );
    expect(delta).toEqual({ create: 1, getChildren: 1, remove: 1 });
  });

  it("Kazoo's Semaphore layout is refused, never joined: a bare count as data, or unsequenced lease nodes", async () => {
    const [a] = await fx.many(1);
    const kazooDir = a.pathOf('kazoo-sem');
    await fx.inspector.create(kazooDir, '3'); // what Kazoo's Semaphore writes
    await fx.inspector.create(`${kazooDir}/${KAZOO_UUID}`, 'kazoo-worker');
    const tree = await fx.tree();
    await expect(a.acquireLease('kazoo-sem', { maxLeases: 3 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      found: 'kazoo-semaphore',
      maxLeases: 3,
    });
    await expect(a.acquire('kazoo-sem', { timeoutMs: 0 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      requested: 'lock',
      found: 'kazoo-semaphore',
    });
    await expect(a.leaseContenders('kazoo-sem')).rejects.toMatchObject({ found: 'kazoo-semaphore' });
    expect(await fx.tree()).toEqual(tree);

    // A Kazoo lease node that appears in one of our semaphores stops our calls there too.
    const held = await a.acquireLease('ours', { maxLeases: 2 });
    await fx.inspector.create(`${a.pathOf('ours')}/${KAZOO_UUID}`, 'kazoo-worker');
    const error = await failure(a.acquireLease('ours', { maxLeases: 2, timeoutMs: 0 }));
    expect(error).toMatchObject({ name: 'LockKindMismatchError', requested: 'lease', found: 'kazoo-semaphore' });
    expect((error as Error).message).toContain("cannot share a semaphore with Kazoo's");
    expect((await fx.nodes('ours'))!.sort()).toEqual(
      [KAZOO_UUID, held.path.slice(held.path.lastIndexOf('/') + 1)].sort(),
    );
    await held.release();
  });

  it('a directory with data no recipe wrote is refused by leases, and left to locks', async () => {
    const [a] = await fx.many(1, { removeEmptyDirectories: false });
    await fx.inspector.create(a.pathOf('annotated'), 'owned by the billing team');
    await expect(a.acquireLease('annotated', { maxLeases: 2 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      found: 'unknown',
    });
    const lock = await a.acquire('annotated', { timeoutMs: 0 });
    await lock.release();
  });
});
