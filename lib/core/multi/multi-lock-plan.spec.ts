import { InvalidLockNameError, InvalidOptionError, LockOrderError, InvalidLockListError } from '../errors/errors.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { MAX_LOCKS_PER_CALL, resolveMultiAcquireOptions } from '../port/options.js';
import { compareKeys, lockOrderConflict, planLocks } from './multi-lock-plan.js';

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
};

const shape = (locks: unknown): Array<[string, string]> => planLocks(locks).map(({ name, mode }) => [name, mode]);

describe('planLocks: the canonical order', () => {
  it('sorts by encoded name, whatever order the caller lists', () => {
    expect(shape(['b', 'a', 'c'])).toEqual([
      ['a', 'write'],
      ['b', 'write'],
      ['c', 'write'],
    ]);
    expect(shape(['c', 'b', 'a'])).toEqual(shape(['a', 'c', 'b']));
  });

  it('orders by the encoded form (ASCII), the same in every process', () => {
    // "é" encodes to "%C3%A9", which sorts before digits and letters; "a/b" to "a%2Fb", after "a".
    const names = ['z', 'a/b', 'é', 'A', '0', 'a'];
    const planned = planLocks(names);
    expect(planned.map((p) => p.key)).toEqual(names.map(encodeLockName).sort());
    expect(planned.map((p) => p.name)).toEqual(['é', '0', 'A', 'a', 'a/b', 'z']);
  });

  it('compares keys by code unit, not by locale', () => {
    expect(['b', 'B', 'a', '_', '%2F'].sort(compareKeys)).toEqual(['%2F', 'B', '_', 'a', 'b']);
    expect(compareKeys('x', 'x')).toBe(0);
  });

  it('every permutation of a list gives one plan', () => {
    const names = ['d', 'a', { name: 'c', mode: 'read' as const }, 'b'];
    const plans = new Set<string>();
    const permute = (rest: unknown[], acc: unknown[]): void => {
      if (rest.length === 0) return void plans.add(JSON.stringify(planLocks(acc)));
      rest.forEach((item, i) => permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, item]));
    };
    permute(names, []);
    expect(plans.size).toBe(1);
  });
});

describe('planLocks: duplicates', () => {
  it('merges them, write winning over read, in any order', () => {
    expect(shape(['a', { name: 'a', mode: 'read' }])).toEqual([['a', 'write']]);
    expect(shape([{ name: 'a', mode: 'read' }, 'a'])).toEqual([['a', 'write']]);
    expect(
      shape([
        { name: 'a', mode: 'read' },
        { name: 'a', mode: 'read' },
      ]),
    ).toEqual([['a', 'read']]);
    expect(shape([{ name: 'a' }, 'b', 'a', 'b'])).toEqual([
      ['a', 'write'],
      ['b', 'write'],
    ]);
  });
});

describe('planLocks: bad input', () => {
  it.each<[string, unknown, RegExp]>([
    ['not an array', 'a', /expected an array, got "a"/],
    ['undefined', undefined, /expected an array, got undefined/],
    ['an object', { 0: 'a', length: 1 }, /expected an array/],
    ['empty', [], /it is empty/],
    [
      'too long',
      Array.from({ length: MAX_LOCKS_PER_CALL + 1 }, (_, i) => `n${i}`),
      /1001 entries, over the limit of 1000/,
    ],
    ['an entry of a wrong type', ['a', 42], /entry 1 is 42/],
    ['a null entry', [null], /entry 0 is null/],
    ['a hole', [, 'a'], /entry 0 is undefined/], // eslint-disable-line no-sparse-arrays
    ['an array entry', [['a']], /entry 0 is an array/],
    ['an unknown key in an entry', [{ name: 'a', mod: 'read' }], /entry 0 has the key "mod"/],
  ])('refuses a list that is %s with InvalidLockListError', (_, locks, message) => {
    const error = thrown(() => planLocks(locks));
    expect(error).toBeInstanceOf(InvalidLockListError);
    expect(error).toMatchObject({ code: 'INVALID_LOCK_LIST', name: 'InvalidLockListError' });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/Pass 1 to 1000 locks/);
  });

  it('takes exactly the limit', () => {
    expect(planLocks(Array.from({ length: MAX_LOCKS_PER_CALL }, (_, i) => `n${i}`))).toHaveLength(MAX_LOCKS_PER_CALL);
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['missing', { mode: 'read' }],
    ['not a string', { name: 7 }],
    ['a lone surrogate', 'a\ud800'],
  ])('refuses a name that is %s with InvalidLockNameError', (_, entry) => {
    expect(thrown(() => planLocks(['ok', entry]))).toBeInstanceOf(InvalidLockNameError);
  });

  it('refuses a bad mode with InvalidOptionError naming the entry', () => {
    const error = thrown(() => planLocks(['a', { name: 'b', mode: 'exclusive' }]));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option: 'locks[1].mode', value: 'exclusive' });
  });
});

describe('lockOrderConflict: what a call chain holding locks may still wait for', () => {
  /** The conflict of a chain holding `held` asking `missing` (names it does not hold). */
  const conflict = (held: string[], missing: string[]) => lockOrderConflict(held, planLocks(missing));

  it('allows anything when nothing is held, and nothing to take when everything is joined', () => {
    expect(conflict([], ['b', 'a'])).toBeUndefined();
    expect(lockOrderConflict(['z', 'b'], [])).toBeUndefined();
  });

  it('allows names that all sort after every lock held', () => {
    expect(conflict(['a'], ['b'])).toBeUndefined();
    expect(conflict(['b', 'a'], ['d', 'c'])).toBeUndefined();
  });

  it('refuses a name to take that sorts before a lock held, naming both sides', () => {
    // withLock('b') then withLocks(['a', 'b']): 'b' is joined, 'a' would be waited for behind it.
    expect(conflict(['b'], ['a'])).toEqual({ held: ['b'], missing: ['a'] });
  });

  it('counts locks held that the list does not name', () => {
    // withLock('z') then withLocks(['a', 'b']) deadlocks with withLocks(['a', 'z']) elsewhere.
    expect(conflict(['z'], ['a', 'b'])).toEqual({ held: ['z'], missing: ['a', 'b'] });
  });

  it('names only the pairs out of order, in the canonical order', () => {
    expect(conflict(['a', 'c', 'e'], ['f', 'd', 'b'])).toEqual({ held: ['c', 'e'], missing: ['b', 'd'] });
  });

  it('compares encoded names, as the plan orders them', () => {
    // "é" encodes to "%C3%A9", before "a": holding "a", "é" cannot be waited for.
    expect(conflict(['a'], ['é'])).toEqual({ held: ['a'], missing: ['é'] });
    expect(conflict(['é'], ['a'])).toBeUndefined();
  });

  it('refuses exactly when some lock held does not sort before some name to take', () => {
    const universe = ['0', 'A', 'a', 'a/b', 'b', 'é'];
    const subsets = universe.reduce<string[][]>((all, name) => [...all, ...all.map((s) => [...s, name])], [[]]);
    for (const held of subsets) {
      const missing = universe.filter((name) => !held.includes(name));
      for (const asked of subsets.filter((s) => s.length > 0 && s.every((name) => missing.includes(name)))) {
        const plan = planLocks(asked);
        const outOfOrder = held.some((h) => plan.some((m) => compareKeys(encodeLockName(h), m.key) >= 0));
        expect(lockOrderConflict(held, plan) !== undefined).toBe(outOfOrder);
      }
    }
  });

  it('LockOrderError says what is held, what was missing, and what to do', () => {
    const error = new LockOrderError(['b'], ['a']);
    expect(error).toMatchObject({ code: 'LOCK_ORDER', name: 'LockOrderError', heldNames: ['b'], missingNames: ['a'] });
    expect(error.message).toContain('holds "b"');
    expect(error.message).toContain('must still take "a", which sorts before it');
    expect(error.message).toMatch(/in one withLocks \(or acquireAll\) from the start, or release "b"/);
    expect(new LockOrderError(['c', 'e'], ['b', 'd']).message).toContain('"c" and "e"');
  });
});

describe('resolveMultiAcquireOptions', () => {
  it('defaults, and keeps what is given', () => {
    const signal = new AbortController().signal;
    expect(resolveMultiAcquireOptions(undefined, 5)).toEqual({ timeoutMs: 5, signal: undefined });
    expect(resolveMultiAcquireOptions({}, 5)).toEqual({ timeoutMs: 5, signal: undefined });
    expect(resolveMultiAcquireOptions({ timeoutMs: 0, signal }, 5)).toEqual({ timeoutMs: 0, signal });
    expect(resolveMultiAcquireOptions({ maxHoldMs: 300 }, 5)).toEqual({
      timeoutMs: 5,
      signal: undefined,
      maxHoldMs: 300,
    });
  });

  it.each<[string, unknown, string, RegExp]>([
    ['an unknown key', { timeout: 5 }, 'timeout', /no option "timeout"/],
    ['a mode (it goes in the list)', { mode: 'read' }, 'mode', /give each lock its mode in the list/],
    ['a bad timeout', { timeoutMs: -1 }, 'timeoutMs', /milliseconds/],
    ['a bad signal', { signal: {} }, 'signal', /AbortSignal/],
    ['a maxHoldMs of 0', { maxHoldMs: 0 }, 'maxHoldMs', /whole number of milliseconds from 1/],
    ['null', null, 'options', /timeoutMs: 5000/],
    ['a number', 5, 'options', /timeoutMs: 5000/],
  ])('refuses %s with InvalidOptionError naming it', (_, options, option, message) => {
    const error = thrown(() => resolveMultiAcquireOptions(options as never, 5));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).toMatch(message);
  });
});
