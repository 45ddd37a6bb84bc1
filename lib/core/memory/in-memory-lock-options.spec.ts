import { hostname } from 'node:os';

import { InvalidOptionError } from '../errors/errors.js';
import { InMemoryLockBackend } from './in-memory-lock-backend.js';
import { resolveInMemoryLockOptions } from './in-memory-lock-options.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';

const failure = (options: unknown): InvalidOptionError => {
  try {
    resolveInMemoryLockOptions(options as never);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error('expected InvalidOptionError');
};

describe('InMemoryLockBackend options', () => {
  it('defaults to an identity like the ZooKeeper backend (host:pid:instance) and a store of its own', () => {
    const a = resolveInMemoryLockOptions(undefined);
    const b = resolveInMemoryLockOptions({});
    expect(a.identity).toMatch(
      new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${process.pid}:memory-\\d+$`),
    );
    expect(b.identity).not.toBe(a.identity);
    expect(a.store).toBeInstanceOf(InMemoryLockStore);
    expect(b.store).not.toBe(a.store);
  });

  it('keeps the identity and store given; undefined means the default', () => {
    const store = new InMemoryLockStore();
    expect(resolveInMemoryLockOptions({ identity: 'worker-1', store })).toEqual({
      identity: 'worker-1',
      store,
      nodeFormat: 'kazoo',
    });
    expect(resolveInMemoryLockOptions({ nodeFormat: 'curator-rw' }).nodeFormat).toBe('curator-rw');
    expect(() => resolveInMemoryLockOptions({ nodeFormat: 'curator' as never })).toThrow(
      /nodeFormat.*"kazoo", "curator-mutex", "curator-rw"/,
    );
    expect(resolveInMemoryLockOptions({ identity: undefined, store: undefined }).identity).toMatch(/:memory-\d+$/);
  });

  it.each([
    ['an empty identity', { identity: '' }, 'identity'],
    ['an identity that is not a string', { identity: 7 }, 'identity'],
    ['an identity over 4096 bytes', { identity: 'é'.repeat(2049) }, 'identity'],
    ['a store that is not an InMemoryLockStore', { store: {} }, 'store'],
    ['null options', null, 'options'],
    ['options that are not an object', 'identity', 'options'],
  ])('rejects %s with InvalidOptionError naming it', (_, options, option) => {
    const error = failure(options);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', option });
    expect(error.message).toContain(option);
  });

  it('rejects an unknown option, naming it and the known ones', () => {
    const error = failure({ identty: 'worker-1' });
    expect(error).toMatchObject({ option: 'identty', value: 'worker-1' });
    expect(error.message).toBe(
      'Invalid option identty="worker-1": expected an option InMemoryLockBackend knows: identity, store or nodeFormat (it has no option "identty"; did you mean "identity"?).',
    );
  });

  it('validates in the constructor, and exposes what it resolved', () => {
    expect(() => new InMemoryLockBackend({ rootPath: '/locks' } as never)).toThrow(InvalidOptionError);
    const store = new InMemoryLockStore();
    const backend = new InMemoryLockBackend({ identity: 'billing-7', store });
    expect([backend.identity, backend.store]).toEqual(['billing-7', store]);
  });
});
