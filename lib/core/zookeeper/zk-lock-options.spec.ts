import { hostname } from 'node:os';

import { InvalidOptionError, ZkConnectionError } from '../errors/errors.js';
import { DEFAULT_ROOT_PATH, defaultIdentity, resolveZkLockOptions, type ZkLockOptions } from './zk-lock-options.js';
import { thrownBy } from '../../../test/support/thrown-by';

function resolveUntyped(options: Record<string, unknown>) {
  return resolveZkLockOptions({ connectionString: '127.0.0.1:2181', ...options } as ZkLockOptions);
}

const IDENTITY = /^[^:]+:\d+:[0-9a-f]{8}$/;

describe('resolveZkLockOptions', () => {
  it('merges client defaults, rootPath /locks and a default identity', () => {
    const resolved = resolveZkLockOptions({ connectionString: '127.0.0.1:2181' });
    expect(DEFAULT_ROOT_PATH).toBe('/locks');
    expect(resolved).toEqual({
      connectionString: '127.0.0.1:2181',
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 10_000,
      rootPath: '/locks',
      identity: expect.stringMatching(IDENTITY),
      removeEmptyDirectories: true,
      emptyDirectoryGraceMs: 1000,
      nodeFormat: 'kazoo',
      release: 'sent',
      credentials: undefined,
    });
  });

  it('builds the default identity from host, pid and a random instance id', () => {
    const identity = resolveZkLockOptions({ connectionString: 'h:1' }).identity;
    expect(identity).toMatch(IDENTITY);
    expect(identity.startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
  });

  it('gives each client its own default identity', () => {
    const identities = new Set(Array.from({ length: 20 }, () => defaultIdentity()));
    expect(identities.size).toBe(20);
  });

  it('keeps a given rootPath, identity and timeouts', () => {
    expect(
      resolveZkLockOptions({
        connectionString: 'a:1,b:2/app',
        rootPath: '/app/locks',
        identity: 'worker-7',
        sessionTimeoutMs: 3000,
      }),
    ).toEqual({
      connectionString: 'a:1,b:2/app',
      sessionTimeoutMs: 3000,
      connectTimeoutMs: 10_000,
      rootPath: '/app/locks',
      identity: 'worker-7',
      removeEmptyDirectories: true,
      emptyDirectoryGraceMs: 1000,
      nodeFormat: 'kazoo',
      release: 'sent',
      credentials: undefined,
    });
  });

  it('keeps a given nodeFormat, and refuses an unknown one naming the three', () => {
    expect(resolveUntyped({ nodeFormat: 'curator-mutex' }).nodeFormat).toBe('curator-mutex');
    expect(() => resolveUntyped({ nodeFormat: 'curator' })).toThrow(
      /nodeFormat="curator".*"kazoo", "curator-mutex", "curator-rw"/,
    );
  });

  it('keeps a given release, "sent" by default, and refuses another value naming the two', () => {
    expect(resolveUntyped({}).release).toBe('sent');
    expect(resolveUntyped({ release: 'confirmed' }).release).toBe('confirmed');
    expect(() => resolveUntyped({ release: 'acked' })).toThrow(/release="acked".*"sent" or "confirmed"/);
  });

  it('accepts an identity of exactly 4096 bytes', () => {
    expect(resolveUntyped({ identity: 'x'.repeat(4096) }).identity).toHaveLength(4096);
  });

  it.each([
    ['the empty string', ''],
    ['a number', 42],
    ['null', null],
    ['an object', { host: 'a' }],
    ['4097 ASCII bytes', 'x'.repeat(4097)],
    ['4098 UTF-8 bytes in 2049 characters', 'é'.repeat(2049)],
  ])('rejects an identity that is %s', (_label, identity) => {
    const error = thrownBy(() => resolveUntyped({ identity }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    const invalid = error as InvalidOptionError;
    expect(invalid.option).toBe('identity');
    expect(invalid.value).toBe(identity);
    expect(invalid.message).toContain('Invalid option identity=');
    expect(invalid.message).toContain('a non-empty string of at most 4096 bytes');
  });

  it.each(['', 'locks', '/', '/a/', '/a//b', '/a/./b', '/zookeeper', '/x\u0001'])('rejects rootPath %j', (rootPath) => {
    const error = thrownBy(() => resolveUntyped({ rootPath }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('rootPath');
    expect((error as InvalidOptionError).value).toBe(rootPath);
    expect((error as InvalidOptionError).message).toContain('rootPath');
  });

  it('rejects a bad connection string before looking at the other options', () => {
    const error = thrownBy(() => resolveUntyped({ connectionString: 'nohostport', rootPath: 'bad' }));
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as ZkConnectionError).message).toContain('"nohostport"');
  });

  it('rejects a bad timeout through the client options', () => {
    const error = thrownBy(() => resolveUntyped({ connectTimeoutMs: 0 }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('connectTimeoutMs');
  });

  it('takes removeEmptyDirectories as a boolean only', () => {
    expect(resolveUntyped({ removeEmptyDirectories: false }).removeEmptyDirectories).toBe(false);
    const error = thrownBy(() => resolveUntyped({ removeEmptyDirectories: 'no' }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('removeEmptyDirectories');
  });
});
