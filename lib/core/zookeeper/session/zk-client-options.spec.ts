import { InvalidOptionError, ZkConnectionError, ZkLockError } from '../../errors/errors.js';
import { resolveZkClientOptions, ZK_CLIENT_DEFAULTS, type ZkClientOptions } from './zk-client-options.js';
import { thrownBy } from '../../../../test/support/thrown-by';

function resolveUntyped(options: unknown) {
  return resolveZkClientOptions(options as ZkClientOptions);
}

const FORMAT = 'host:port[,host:port…][/chroot]';

describe('resolveZkClientOptions', () => {
  it('fills in both timeouts with 10 s defaults', () => {
    expect(ZK_CLIENT_DEFAULTS).toEqual({ sessionTimeoutMs: 10_000, connectTimeoutMs: 10_000 });
    expect(resolveZkClientOptions({ connectionString: '127.0.0.1:2181' })).toEqual({
      connectionString: '127.0.0.1:2181',
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 10_000,
    });
  });

  it('keeps given timeouts', () => {
    expect(resolveZkClientOptions({ connectionString: 'h:1', sessionTimeoutMs: 4000, connectTimeoutMs: 1500 })).toEqual(
      {
        connectionString: 'h:1',
        sessionTimeoutMs: 4000,
        connectTimeoutMs: 1500,
      },
    );
  });

  describe('connection string', () => {
    it.each([
      'localhost:2181',
      '127.0.0.1:2181',
      'zk-1.example.com:2181',
      'a:1,b:2',
      'a:1,b:2,c:65535',
      '127.0.0.1:2181/app',
      'a:1,b:2/app/locks',
    ])('accepts %j and returns it unchanged', (connectionString) => {
      expect(resolveZkClientOptions({ connectionString }).connectionString).toBe(connectionString);
    });

    it.each([
      ['', 'it must be a non-empty string'],
      ['   ', 'it must be a non-empty string'],
      ['nohostport', '"nohostport" is not host:port'],
      ['h:', '"h:" is not host:port'],
      [':2181', '":2181" is not host:port'],
      ['h:port', '"h:port" is not host:port'],
      ['h:-1', '"h:-1" is not host:port'],
      ['h:123456', '"h:123456" is not host:port'],
      ['h:0', 'port 0 is out of range'],
      ['h:70000', 'port 70000 is out of range'],
      ['h:65536', 'port 65536 is out of range'],
      ['a:1,,b:2', '"" is not host:port'],
      ['a:1,', '"" is not host:port'],
      ['a:1, b:2', '" b:2" is not host:port'],
      ['a:1 ', '"a:1 " is not host:port'],
      ['::1:2181', '"::1:2181" is not host:port'],
      // node-zookeeper-client 1.1.3 reads "[::1]:2181" as host "[": refuse it with a reason.
      ['[::1]:2181', 'cannot parse IPv6 literals'],
      ['h:1/bad/', 'the chroot "/bad/" is not a valid absolute path'],
      ['h:1/', 'the chroot "/" is not a valid absolute path'],
      ['h:1/a//b', 'the chroot "/a//b" is not a valid absolute path'],
      ['h:1/a/../b', 'the chroot "/a/../b" is not a valid absolute path'],
      ['/app', '"" is not host:port'],
    ])('rejects %j (%s)', (connectionString, why) => {
      const error = thrownBy(() => resolveZkClientOptions({ connectionString }));
      expect(error).toBeInstanceOf(ZkConnectionError);
      expect(error).toBeInstanceOf(ZkLockError);
      const bad = error as ZkConnectionError;
      expect(bad.code).toBe('ZK_CONNECTION');
      expect(bad.connectionString).toBe(connectionString);
      expect(bad.message).toContain(JSON.stringify(connectionString));
      expect(bad.message).toContain(why);
      expect(bad.message).toContain(FORMAT);
    });

    it.each([
      ['undefined', undefined, 'undefined'],
      ['null', null, 'null'],
      ['a number', 2181, '2181'],
      ['an array', ['h:1'], 'an array'],
    ])('rejects %s', (_label, connectionString, shown) => {
      const error = thrownBy(() => resolveUntyped({ connectionString }));
      expect(error).toBeInstanceOf(ZkConnectionError);
      const bad = error as ZkConnectionError;
      expect(bad.message).toContain(`Invalid ZooKeeper connection string ${shown}`);
      expect(bad.message).toContain('it must be a non-empty string');
      expect(bad.message).toContain(FORMAT);
      expect(bad.connectionString).toBe(String(connectionString));
    });
  });

  describe.each([
    // ZooKeeper's connect request carries the session timeout as a 32-bit int.
    ['sessionTimeoutMs', 2 ** 31 - 1],
    // The connect deadline waits any whole number of ms (longTimeout chains past 2^31 - 1).
    ['connectTimeoutMs', Number.MAX_SAFE_INTEGER],
  ] as const)('%s', (option, max) => {
    it.each([1, 400, 60_000, 2 ** 31 - 1, max])('accepts %p', (value) => {
      expect(resolveZkClientOptions({ connectionString: 'h:1', [option]: value })[option]).toBe(value);
    });

    it('refuses the next value past its maximum, naming the maximum', () => {
      const error = thrownBy(() => resolveZkClientOptions({ connectionString: 'h:1', [option]: max + 1 }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).message).toContain(`a whole number of milliseconds from 1 to ${max}`);
    });

    it.each([
      ['zero', 0],
      ['a negative number', -1],
      ['a fraction', 1.5],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['an unsafe integer', 2 ** 53],
      ['a numeric string', '1000'],
      ['null', null],
    ])('rejects %s', (_label, value) => {
      const error = thrownBy(() => resolveUntyped({ connectionString: 'h:1', [option]: value }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      const invalid = error as InvalidOptionError;
      expect(invalid.code).toBe('INVALID_OPTION');
      expect(invalid.option).toBe(option);
      expect(Object.is(invalid.value, value)).toBe(true);
      expect(invalid.message).toContain(`Invalid option ${option}=`);
      expect(invalid.message).toContain(`a whole number of milliseconds from 1 to ${max}`);
    });
  });

  it.each([
    ['null', null],
    ['a string', 'h:1'],
    ['undefined', undefined],
  ])('rejects options given as %s', (_label, options) => {
    const error = thrownBy(() => resolveUntyped(options));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('options');
    expect((error as InvalidOptionError).message).toContain('connectionString');
  });
});
