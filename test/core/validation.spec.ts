import {
  decodeLockName,
  encodeLockName,
  InvalidLockNameError,
  InvalidOptionError,
  ZkConnectionError,
  ZkLockBackend,
} from '../../lib/index';
import { freePort } from '../support/free-port';
import { LockFixture } from '../support/lock-fixture';

describe('bad input fails fast, with nothing sent to ZooKeeper', () => {
  let fx: LockFixture;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  beforeAll(async () => {
    fx = await LockFixture.create('validation');
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await fx.cleanup();
  });
  // Nothing else in the process is disturbed: no stray rejection from a refused call.
  afterEach(() => expect(unhandled).toEqual([]));

  const badNames: Array<[string, unknown]> = [
    ['empty', ''],
    ['not a string', 42],
    ['undefined', undefined],
    ['a lone surrogate', 'a\ud800b'],
    ['too long', 'x'.repeat(2000)],
  ];

  it.each(badNames)('rejects a lock name that is %s with InvalidLockNameError', async (_, name) => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    for (const call of [
      () => a.acquire(name as string),
      () => a.tryAcquire(name as string),
      () => a.contenders(name as string),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockNameError);
      expect((error as Error).message).toMatch(/Invalid lock name/);
    }
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.tree()).toEqual([]);
  });

  const oddButValidNames: Array<[string, string]> = [
    ['a slash', 'orders/42'],
    ['a dot-dot', '..'],
    ['a path escape', '../../etc'],
    ['control characters', 'a\u0000b\u0007c\n'],
    ['non-Latin script', '注文-42'],
    ['an emoji', 'lock-🔒'],
    ['right-to-left marks', '\u202eabc\u202c'],
    ['a percent sign', '100%'],
    ['a long name', 'x'.repeat(300)],
  ];

  it.each(oddButValidNames)('accepts a name with %s, as exactly one directory under the root', async (_, name) => {
    const [a] = await fx.many(1);
    const lock = await a.acquire(name, { timeoutMs: 5000 });
    const children = await fx.inspector.children(fx.rootPath);
    expect(children).toEqual([encodeLockName(name)]);
    expect(decodeLockName(children![0])).toBe(name);
    expect(await fx.inspector.children(a.pathOf(name))).toHaveLength(1);
    await lock.release();
    expect(await fx.tree()).toEqual([]);
  });

  const badOptions: Array<[string, object, string]> = [
    ['an unknown mode', { mode: 'exclusive' }, 'mode'],
    ['a negative timeout', { timeoutMs: -1 }, 'timeoutMs'],
    ['a NaN timeout', { timeoutMs: NaN }, 'timeoutMs'],
    ['a string timeout', { timeoutMs: '100' }, 'timeoutMs'],
    ['a signal that is not an AbortSignal', { signal: {} }, 'signal'],
    ['an Infinity that is a string', { timeoutMs: 'Infinity' }, 'timeoutMs'],
    ['a mode of the wrong type', { mode: 1 }, 'mode'],
    ['null options', null as unknown as object, 'options'],
  ];

  it.each(badOptions)('rejects %s with InvalidOptionError naming it', async (_, options, option) => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    const error = await a.acquire('x', options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).toContain(option);
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.tree()).toEqual([]);
  });

  it('with nodeFormat "curator-mutex" as the default, refuses readers (one lock or a group) with nothing sent', async () => {
    const a = await fx.backend({ nodeFormat: 'curator-mutex' });
    const before = a.client.counter.total();
    for (const call of [
      () => a.acquire('report', { mode: 'read' }),
      () => a.tryAcquire('report', { mode: 'read' }),
      () => a.acquireAll(['ledger', { name: 'report', mode: 'read' }]),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'mode', value: 'read' });
      expect((error as Error).message).toMatch(/InterProcessMutex.*"curator-rw"/);
    }
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.tree()).toEqual([]);
    const reader = await a.acquire('report', { mode: 'read', nodeFormat: 'curator-rw', timeoutMs: 0 }); // a call's own format wins
    expect(reader.path).toMatch(/\/_c_[0-9a-f-]{36}-__READ__\d{10}$/);
    await reader.release();
  });

  it('rejects bad client options before connecting', async () => {
    await expect(ZkLockBackend.connect({ connectionString: 'not a host' })).rejects.toBeInstanceOf(ZkConnectionError);
    await expect(
      ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', rootPath: 'locks' }),
    ).rejects.toMatchObject({ option: 'rootPath' });
    await expect(
      ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', sessionTimeoutMs: 0 }),
    ).rejects.toMatchObject({ option: 'sessionTimeoutMs' });
    await expect(ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', identity: '' })).rejects.toMatchObject({
      option: 'identity',
    });
    // A typo used to do nothing: now it is refused, naming the option meant.
    const typo = ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', sessionTimeout: 3000 } as never);
    await expect(typo).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(typo).rejects.toThrow(/an option ZkLockBackend knows: .*did you mean "sessionTimeoutMs"\?/);
  });

  it('fails to connect with a ZkConnectionError naming the connection string when no server answers', async () => {
    const connectionString = `127.0.0.1:${await freePort()}`;
    const error = await ZkLockBackend.connect({ connectionString, connectTimeoutMs: 400 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toContain(connectionString);
    expect((error as Error).message).toContain('400 ms');
  });
});
