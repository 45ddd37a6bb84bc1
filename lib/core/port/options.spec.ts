import { InvalidOptionError, ZkLockError } from '../errors/errors.js';
import {
  resolveAcquireOptions,
  MAX_LEASES,
  resolveLeaseOptions,
  resolveListingPrefix,
  resolveMultiAcquireOptions,
} from './options.js';
import type { AcquireOptions } from './lock-backend.js';
import { thrownBy } from '../../../test/support/thrown-by.js';

/** Calls the validator with a value the types would refuse, as plain JavaScript callers can. */
function resolveUntyped(options: unknown, defaultTimeoutMs = 5000) {
  return resolveAcquireOptions(options as AcquireOptions, defaultTimeoutMs);
}

describe('resolveAcquireOptions', () => {
  describe('defaults', () => {
    it('without options: write, the default timeout, no signal', () => {
      expect(resolveAcquireOptions(undefined, 5000)).toEqual({ mode: 'write', timeoutMs: 5000, signal: undefined });
    });

    it('with empty options: the same defaults', () => {
      expect(resolveAcquireOptions({}, 1234)).toEqual({ mode: 'write', timeoutMs: 1234, signal: undefined });
    });

    it('passes an Infinity default through', () => {
      expect(resolveAcquireOptions({ mode: 'read' }, Infinity).timeoutMs).toBe(Infinity);
    });

    it('treats explicitly undefined fields as absent', () => {
      expect(resolveAcquireOptions({ mode: undefined, timeoutMs: undefined, signal: undefined }, 700)).toEqual({
        mode: 'write',
        timeoutMs: 700,
        signal: undefined,
      });
    });
  });

  describe('accepted values', () => {
    it.each(['read', 'write'] as const)('mode %s', (mode) => {
      expect(resolveAcquireOptions({ mode }, 5000).mode).toBe(mode);
    });

    it.each([0, 1, 1.5, 30_000, Infinity])('timeoutMs %p', (timeoutMs) => {
      expect(resolveAcquireOptions({ timeoutMs }, 5000).timeoutMs).toBe(timeoutMs);
    });

    it('an AbortSignal, returned as the same object', () => {
      const { signal } = new AbortController();
      expect(resolveAcquireOptions({ signal }, 5000).signal).toBe(signal);
    });

    it('an already-aborted AbortSignal (the acquire itself reports the abort)', () => {
      const signal = AbortSignal.abort('why');
      expect(resolveAcquireOptions({ signal }, 5000).signal).toBe(signal);
    });

    it('all options together', () => {
      const { signal } = new AbortController();
      expect(resolveAcquireOptions({ mode: 'read', timeoutMs: 0, signal }, 5000)).toEqual({
        mode: 'read',
        timeoutMs: 0,
        signal,
      });
    });
  });

  describe('rejected values', () => {
    function expectInvalid(options: unknown, option: string, value: unknown): InvalidOptionError {
      const error = thrownBy(() => resolveUntyped(options));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toBeInstanceOf(ZkLockError);
      const invalid = error as InvalidOptionError;
      expect(invalid.code).toBe('INVALID_OPTION');
      expect(invalid.option).toBe(option);
      expect(Object.is(invalid.value, value)).toBe(true);
      expect(invalid.message).toContain(`Invalid option ${option}=`);
      return invalid;
    }

    it.each([
      ['a negative number', -1],
      ['-Infinity', -Infinity],
      ['NaN', NaN],
      ['a numeric string', '100'],
      ['null', null],
      ['a bigint', 100n],
      ['a boolean', true],
    ])('timeoutMs as %s', (_label, timeoutMs) => {
      const error = expectInvalid({ timeoutMs }, 'timeoutMs', timeoutMs);
      expect(error.message).toContain('a number of milliseconds >= 0');
    });

    it('shows the bad timeout in the message', () => {
      expect(expectInvalid({ timeoutMs: -5 }, 'timeoutMs', -5).message).toContain('timeoutMs=-5');
      expect(expectInvalid({ timeoutMs: '100' }, 'timeoutMs', '100').message).toContain('timeoutMs="100"');
    });

    it.each([
      ['an unknown mode', 'exclusive'],
      ['an upper-case mode', 'READ'],
      ['an empty string', ''],
      ['a number', 1],
      ['null', null],
    ])('mode as %s', (_label, mode) => {
      const error = expectInvalid({ mode }, 'mode', mode);
      expect(error.message).toContain('"read" or "write"');
    });

    it.each([
      ['a plain object shaped like a signal', { aborted: false, addEventListener: () => undefined }],
      ['an AbortController', new AbortController()],
      ['a string', 'signal'],
      ['null', null],
    ])('signal as %s', (_label, signal) => {
      const error = expectInvalid({ signal }, 'signal', signal);
      expect(error.message).toContain('an AbortSignal');
    });

    it.each([
      ['null', null],
      ['a string', 'read'],
      ['a number', 5000],
      ['a boolean', true],
      ['a function', () => ({ mode: 'read' })],
    ])('options as %s', (_label, options) => {
      const error = expectInvalid(options, 'options', options);
      expect(error.message).toContain('an object');
    });

    it('reports the mode before the timeout when both are wrong', () => {
      expectInvalid({ mode: 'x', timeoutMs: -1 }, 'mode', 'x');
    });
  });
});

const thrown = (options: unknown): InvalidOptionError => {
  try {
    resolveLeaseOptions(options as never, Infinity);
  } catch (error) {
    return error as InvalidOptionError;
  }
  throw new Error('expected a throw');
};

describe("acquireLease's options", () => {
  it('resolves maxLeases, the default timeout and no signal', () => {
    expect(resolveLeaseOptions({ maxLeases: 3 }, Infinity)).toEqual({
      maxLeases: 3,
      timeoutMs: Infinity,
      signal: undefined,
    });
    const signal = new AbortController().signal;
    expect(resolveLeaseOptions({ maxLeases: MAX_LEASES, timeoutMs: 0, signal }, Infinity)).toEqual({
      maxLeases: 1000,
      timeoutMs: 0,
      signal,
    });
  });

  it.each([undefined, null, 3, 'x'])('needs an options object (%p)', (options) => {
    expect(thrown(options)).toMatchObject({ name: 'InvalidOptionError', option: 'options' });
  });

  it.each([undefined, 0, -1, 1.5, NaN, Infinity, MAX_LEASES + 1, '3', 3n, null])(
    'refuses maxLeases %p, naming the option and the range',
    (maxLeases) => {
      const error = thrown({ maxLeases });
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.option).toBe('maxLeases');
      expect(error.message).toContain('a whole number of leases from 1 to 1000');
    },
  );

  it.each([
    ['mode', 'read'],
    ['maxLease', 3],
    ['revocable', true],
    ['timeout', 5],
  ])('refuses the unknown option %s, naming it', (key, value) => {
    const error = thrown({ maxLeases: 2, [key]: value });
    expect(error.option).toBe(key);
    expect(error.message).toContain(
      'an option acquireLease/withLease/@WithLease knows: maxLeases, timeoutMs, signal, maxHoldMs or release',
    );
  });

  it('checks timeoutMs and signal as acquire does', () => {
    expect(thrown({ maxLeases: 1, timeoutMs: -1 }).option).toBe('timeoutMs');
    expect(thrown({ maxLeases: 1, timeoutMs: NaN }).option).toBe('timeoutMs');
    expect(thrown({ maxLeases: 1, signal: {} }).option).toBe('signal');
  });
});

describe('resolveListingPrefix', () => {
  it('takes any string, and nothing as every lock', () => {
    expect(resolveListingPrefix(undefined)).toBe('');
    expect(resolveListingPrefix('orders/')).toBe('orders/');
  });

  it.each([42, null, {}, ['a']])('refuses %j with an InvalidOptionError naming the option', (prefix) => {
    expect(() => resolveListingPrefix(prefix)).toThrow(InvalidOptionError);
    expect(() => resolveListingPrefix(prefix)).toThrow(/prefix/);
  });
});

describe('maxHoldMs', () => {
  it('is resolved only when given: any whole number of milliseconds from 1, past setTimeout’s 2^31 - 1 too', () => {
    expect(resolveAcquireOptions({}, 5000)).not.toHaveProperty('maxHoldMs');
    for (const maxHoldMs of [1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expect(resolveAcquireOptions({ maxHoldMs }, 5000).maxHoldMs).toBe(maxHoldMs);
      expect(resolveLeaseOptions({ maxLeases: 1, maxHoldMs }, 5000).maxHoldMs).toBe(maxHoldMs);
    }
  });

  it.each([0, -5, 2.5, NaN, Infinity, '100', null, Number.MAX_SAFE_INTEGER + 1])(
    'refuses %p with an InvalidOptionError naming maxHoldMs and its range',
    (maxHoldMs) => {
      for (const resolve of [
        () => resolveUntyped({ maxHoldMs }),
        () => resolveLeaseOptions({ maxLeases: 1, maxHoldMs } as never, 5000),
      ]) {
        const error = thrownBy(resolve) as InvalidOptionError;
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(error.option).toBe('maxHoldMs');
        expect(error.message).toContain(`a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`);
      }
    },
  );
});

describe('release', () => {
  it('is resolved only when given, for a lock, a lease and a group', () => {
    expect(resolveAcquireOptions({}, 5000)).not.toHaveProperty('release');
    expect(resolveLeaseOptions({ maxLeases: 1 }, 5000)).not.toHaveProperty('release');
    expect(resolveMultiAcquireOptions({}, 5000)).not.toHaveProperty('release');
    for (const release of ['sent', 'confirmed'] as const) {
      expect(resolveAcquireOptions({ release }, 5000).release).toBe(release);
      expect(resolveLeaseOptions({ maxLeases: 1, release }, 5000).release).toBe(release);
      expect(resolveMultiAcquireOptions({ release }, 5000).release).toBe(release);
    }
  });

  it.each(['confirm', true, null, 1])(
    'refuses %p with an InvalidOptionError naming release and its values',
    (release) => {
      for (const resolve of [
        () => resolveUntyped({ release }),
        () => resolveLeaseOptions({ maxLeases: 1, release } as never, 5000),
        () => resolveMultiAcquireOptions({ release } as never, 5000),
      ]) {
        const error = thrownBy(resolve) as InvalidOptionError;
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(error.option).toBe('release');
        expect(error.message).toContain('"sent" or "confirmed"');
      }
    },
  );
});
