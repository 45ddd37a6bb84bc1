import { InvalidOptionError, ZkLockError } from '../errors/errors.js';
import { validateRootPath } from './root-path.js';
import { thrownBy } from '../../../test/support/thrown-by';

describe('validateRootPath', () => {
  it.each([
    '/locks',
    '/a',
    '/a/b/c',
    '/my-app/locks_v2',
    '/a.b',
    '/...',
    '/.hidden',
    '/a/..b',
    '/zookeeperx',
    '/x/zookeeper',
    '/é',
    '/a b',
  ])('accepts %j and returns it unchanged', (path) => {
    expect(validateRootPath(path)).toBe(path);
  });

  it.each([
    ['the empty string', ''],
    ['a relative path', 'locks'],
    ['a relative path with slashes', 'locks/a'],
    ['the root itself', '/'],
    ['a trailing slash', '/a/'],
    ['an empty segment', '/a//b'],
    ['a leading empty segment', '//a'],
    ['a "." segment', '/a/./b'],
    ['a ".." segment', '/a/../b'],
    ['a final "." segment', '/a/.'],
    ['a single ".."', '/..'],
    ['the reserved /zookeeper', '/zookeeper'],
    ['a path under /zookeeper', '/zookeeper/quota'],
    ['a control character', '/x\u0001'],
    ['a NUL character', '/x\u0000'],
    ['DEL', '/x\u007f'],
    ['a C1 control character', '/x\u0085'],
    ['a surrogate pair (emoji)', '/x😀'],
    ['a private-use character', '/x\ue000'],
    ['a noncharacter', '/x\uffff'],
  ])('rejects %s: %j', (_label, path) => {
    const error = thrownBy(() => validateRootPath(path));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toBeInstanceOf(ZkLockError);
    const invalid = error as InvalidOptionError;
    expect(invalid.code).toBe('INVALID_OPTION');
    expect(invalid.option).toBe('rootPath');
    expect(invalid.value).toBe(path);
    expect(invalid.message).toContain(`Invalid option rootPath=${JSON.stringify(path)}`);
    expect(invalid.message).toContain('an absolute ZooKeeper path such as "/locks"');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { path: '/locks' }],
  ])('rejects %s', (_label, value) => {
    const error = thrownBy(() => validateRootPath(value));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('rootPath');
    expect((error as InvalidOptionError).value).toBe(value);
  });
});
