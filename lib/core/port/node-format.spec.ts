import { InvalidOptionError } from '../errors/errors.js';
import { nodeFormatFor, validateNodeFormat } from './node-format.js';

describe('nodeFormat option', () => {
  it.each(['kazoo', 'curator-mutex', 'curator-rw', undefined])('accepts %s', (value) => {
    expect(validateNodeFormat('nodeFormat', value)).toBe(value);
  });

  it.each(['curator', 'Kazoo', '', 1, null, {}])('refuses %p, naming the option and the three formats', (value) => {
    const error = (() => {
      try {
        validateNodeFormat('nodeFormat', value);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(/nodeFormat/);
    expect((error as Error).message).toMatch(/"kazoo", "curator-mutex", "curator-rw"/);
  });

  it("takes the call's format over the client's", () => {
    expect(nodeFormatFor('write', 'curator-rw', 'kazoo')).toBe('curator-rw');
    expect(nodeFormatFor('read', undefined, 'curator-rw')).toBe('curator-rw');
    expect(nodeFormatFor('write', undefined, 'curator-mutex')).toBe('curator-mutex');
  });

  it('refuses a reader in "curator-mutex", saying to use "curator-rw"; blaming the option the call gave', () => {
    expect(() => nodeFormatFor('read', 'curator-mutex', 'kazoo')).toThrow(
      /nodeFormat.*curator-mutex.*InterProcessMutex.*"curator-rw"/s,
    );
    const byDefault = (() => {
      try {
        nodeFormatFor('read', undefined, 'curator-mutex');
      } catch (e) {
        return e as InvalidOptionError;
      }
    })();
    expect(byDefault).toBeInstanceOf(InvalidOptionError);
    expect(byDefault?.option).toBe('mode');
  });
});
