import { InvalidOptionError } from '../errors/errors.js';
import { MAX_LEASES, resolveLeaseOptions } from './lease-options.js';

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
      'an option acquireLease/withLease/@WithLease knows: maxLeases, timeoutMs or signal',
    );
  });

  it('checks timeoutMs and signal as acquire does', () => {
    expect(thrown({ maxLeases: 1, timeoutMs: -1 }).option).toBe('timeoutMs');
    expect(thrown({ maxLeases: 1, timeoutMs: NaN }).option).toBe('timeoutMs');
    expect(thrown({ maxLeases: 1, signal: {} }).option).toBe('signal');
  });
});
