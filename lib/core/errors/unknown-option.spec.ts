import { InvalidOptionError } from './errors.js';
import { assertKnownOptions, closestOption } from './unknown-option.js';

const KNOWN = ['connectionString', 'sessionTimeoutMs', 'connectTimeoutMs', 'identity', 'nodeFormat'];

describe('unknown options', () => {
  it.each([
    ['sessionTimeout', 'sessionTimeoutMs'],
    ['sessiontimeoutms', 'sessionTimeoutMs'],
    ['connectionstring', 'connectionString'],
    ['identty', 'identity'],
    ['nodeformat', 'nodeFormat'],
    ['node_format', 'nodeFormat'],
  ])('suggests the closest known option for %s: %s', (key, closest) => {
    expect(closestOption(key, KNOWN)).toBe(closest);
  });

  it.each(['retries', 'x', 'acquireTimeoutMs'])('suggests nothing for %s, which is no slip of a known one', (key) => {
    expect(closestOption(key, KNOWN)).toBeUndefined();
  });

  it('throws InvalidOptionError naming the key, its value, the owner, every known option and the closest', () => {
    const error = (() => {
      try {
        assertKnownOptions({ connectionString: 'h:1', sessionTimeout: 3000 }, KNOWN, 'ZkLockBackend');
      } catch (e) {
        return e as InvalidOptionError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', option: 'sessionTimeout', value: 3000 });
    expect(error!.message).toBe(
      'Invalid option sessionTimeout=3000: expected an option ZkLockBackend knows: connectionString, sessionTimeoutMs, connectTimeoutMs, identity or nodeFormat (it has no option "sessionTimeout"; did you mean "sessionTimeoutMs"?).',
    );
  });

  it('says to check the spelling when nothing is close, and lets a hint explain a key known elsewhere', () => {
    expect(() => assertKnownOptions({ retries: 3 }, KNOWN, 'X')).toThrow(
      /it has no option "retries"; check the spelling/,
    );
    expect(() =>
      assertKnownOptions({ mode: 'read' }, KNOWN, 'X', (key) => (key === 'mode' ? 'no mode here' : undefined)),
    ).toThrow(/expected no mode here/);
    expect(() => assertKnownOptions({ identity: 'a', nodeFormat: 'kazoo' }, KNOWN, 'X')).not.toThrow();
  });
});
