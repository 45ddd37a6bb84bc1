import { InvalidLockNameError, InvalidOptionError, ZkConnectionError, ZkLockBackend } from '../../lib/index';
import { freePort } from '../support/free-port';
import { LockFixture } from '../support/lock-fixture';

describe('bad input fails fast, with nothing sent to ZooKeeper', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('validation')));
  afterAll(() => fx.cleanup());

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
    for (const call of [() => a.acquire(name as string), () => a.tryAcquire(name as string), () => a.contenders(name as string)]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockNameError);
      expect((error as Error).message).toMatch(/Invalid lock name/);
    }
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.tree()).toEqual([]);
  });

  const badOptions: Array<[string, object, string]> = [
    ['an unknown mode', { mode: 'exclusive' }, 'mode'],
    ['a negative timeout', { timeoutMs: -1 }, 'timeoutMs'],
    ['a NaN timeout', { timeoutMs: NaN }, 'timeoutMs'],
    ['a string timeout', { timeoutMs: '100' }, 'timeoutMs'],
    ['a signal that is not an AbortSignal', { signal: {} }, 'signal'],
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

  it('rejects bad client options before connecting', async () => {
    await expect(ZkLockBackend.connect({ connectionString: 'not a host' })).rejects.toBeInstanceOf(ZkConnectionError);
    await expect(ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', rootPath: 'locks' })).rejects.toMatchObject({ option: 'rootPath' });
    await expect(ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', sessionTimeoutMs: 0 })).rejects.toMatchObject({ option: 'sessionTimeoutMs' });
    await expect(ZkLockBackend.connect({ connectionString: '127.0.0.1:2181', identity: '' })).rejects.toMatchObject({ option: 'identity' });
  });

  it('fails to connect with a ZkConnectionError naming the connection string when no server answers', async () => {
    const connectionString = `127.0.0.1:${await freePort()}`;
    const error = await ZkLockBackend.connect({ connectionString, connectTimeoutMs: 400 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toContain(connectionString);
    expect((error as Error).message).toContain('400 ms');
  });
});
