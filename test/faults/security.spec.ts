import { inspect } from 'node:util';

import { ZkConnectionError, ZkLockBackend, ZkOperationError } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const credentials = { username: 'billing', password: 's3cret-Pa55' };

describe('security: digest credentials, ACLs and isolation', () => {
  let fx: LockFixture;
  let outsider: ZkInspector;
  beforeAll(async () => {
    fx = await LockFixture.create('security');
    outsider = await ZkInspector.connect(zkConnect()); // no credentials
  });
  afterAll(async () => {
    await outsider.close();
    // Only the credentials may delete what they created.
    const owner = await ZkInspector.connect(zkConnect(), `${credentials.username}:${credentials.password}`);
    await owner.removeTree(fx.rootPath);
    await owner.close();
    await fx.cleanup();
  });

  it('locks nodes against clients without the credentials', async () => {
    const [a, b] = await fx.many(2, { credentials });
    const held = await a.acquire('invoice:1');
    const dir = a.pathOf('invoice:1');

    for (const path of [fx.rootPath, dir, held.path]) {
      expect(await outsider.acl(path)).toEqual([expect.stringMatching(/^digest:billing:.+=31$/), 'world:anyone=1']);
    }
    // Cannot break the lock (delete needs DELETE on the parent), jump in, or change it…
    expect(await outsider.attempt('remove', held.path)).toBe('NO_AUTH');
    expect(await outsider.attempt('create', `${dir}/ffffffffffffffffffffffffffffffff__lock__0000000000`)).toBe(
      'NO_AUTH',
    );
    expect(await outsider.attempt('setData', held.path)).toBe('NO_AUTH');
    expect(await outsider.attempt('remove', dir)).toBe('NO_AUTH');
    // …but can see who holds it.
    expect(await outsider.data(held.path)).toBe(a.options.identity);
    expect(await fx.nodes('invoice:1')).toEqual([nodeOf(held)]);

    // Clients with the credentials queue and get it as usual.
    expect(await b.tryAcquire('invoice:1')).toBeNull();
    const waiting = b.acquire('invoice:1', { timeoutMs: 10_000 });
    await fx.queued('invoice:1', 2);
    await held.release();
    await (await waiting).release();
    expect(await fx.nodes('invoice:1')).toBeNull();
  });

  it('never shows the password in errors, logs of the options, or JSON', async () => {
    const [a] = await fx.many(1, { credentials });
    await (await a.acquire('shared')).release(); // the root now exists, owned by `billing`
    const intruder = await fx.backend({ credentials: { username: 'billing', password: 'wrong-password' } });
    const error = await intruder.acquire('shared').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkOperationError);
    expect(error).toMatchObject({ zkCode: 'NO_AUTH' });
    for (const text of [
      (error as Error).message,
      (error as Error).stack ?? '',
      inspect(error, { depth: 5 }),
      JSON.stringify(intruder.options),
      inspect(intruder.options, { depth: 5 }),
      inspect(a, { depth: 6 }),
    ]) {
      expect(text).not.toContain('wrong-password');
      expect(text).not.toContain(credentials.password);
    }
    const badOption = await ZkLockBackend.connect({
      connectionString: zkConnect(),
      credentials: { username: 'a:b', password: 'hidden-pass' },
    }).catch((e: unknown) => e);
    expect((badOption as Error).message).toContain('credentials.username');
    expect((badOption as Error).message).not.toContain('hidden-pass');
    const noPassword = await ZkLockBackend.connect({
      connectionString: zkConnect(),
      credentials: { username: 'a', password: '' },
    }).catch((e: unknown) => e);
    expect((noPassword as Error).message).toContain('credentials.password');
  });

  it('isolates applications by root path and by chroot', async () => {
    const rootA = uniqueRoot('chroot-a');
    const rootB = uniqueRoot('chroot-b');
    await outsider.create(rootA);
    await outsider.create(rootB);
    const a = await ZkLockBackend.connect({ connectionString: `${zkConnect()}${rootA}` });
    const b = await ZkLockBackend.connect({ connectionString: `${zkConnect()}${rootB}` });
    const c = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: `${rootA}/other-app` });
    try {
      const locks = await Promise.all([a, b, c].map((client) => client.acquire('same-name', { timeoutMs: 0 })));
      expect(await outsider.children(`${rootA}/locks/same-name`)).toHaveLength(1);
      expect(await outsider.children(`${rootB}/locks/same-name`)).toHaveLength(1);
      expect(await outsider.children(`${rootA}/other-app/same-name`)).toHaveLength(1);
      await Promise.all(locks.map((l) => l.release()));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
      await outsider.removeTree(rootA);
      await outsider.removeTree(rootB);
    }
  });

  it('says so when the chroot does not exist', async () => {
    const connectionString = `${zkConnect()}/no-such-chroot-${Date.now()}`;
    const error = await ZkLockBackend.connect({ connectionString }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect(error).toMatchObject({ reason: 'chroot' });
    expect((error as Error).message).toMatch(/chroot "\/no-such-chroot-\d+" .* does not exist/);
  });
});
