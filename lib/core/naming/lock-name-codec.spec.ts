import { InvalidLockNameError, ZkLockError } from '../errors/errors.js';
import { decodeLockName, encodeLockName, MAX_ENCODED_NAME_LENGTH } from './lock-name-codec.js';
import { thrownBy } from '../../../test/support/thrown-by';

/** A ZooKeeper node name the library can always create: one segment, plain ASCII, not relative. */
function expectValidNodeName(encoded: string): void {
  expect(encoded).not.toContain('/');
  expect(encoded).not.toBe('.');
  expect(encoded).not.toBe('..');
  expect(encoded.length).toBeGreaterThan(0);
  // Printable ASCII without space: nothing PathUtils.validatePath could refuse.
  expect(encoded).toMatch(/^[\x21-\x7e]+$/);
  // Exactly the safe characters and upper-case %XX escapes.
  expect(encoded).toMatch(/^(?:[A-Za-z0-9_.~:@-]|%[0-9A-F]{2})+$/);
}

/** Deterministic PRNG (mulberry32) so a failure can be reproduced. */
function prng(start: number): () => number {
  let a = start >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Fragments chosen to stress escaping: separators, the escape char itself, dots,
// already-escaped-looking text, controls, non-ASCII and astral characters.
const FRAGMENTS = [
  'a',
  'Z',
  '0',
  '9',
  '_',
  '-',
  '.',
  '..',
  '...',
  '~',
  ':',
  '@',
  '/',
  '//',
  '%',
  '%2F',
  '%25',
  '%2E',
  '%2e',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u009f',
  '+',
  '?',
  '#',
  '&',
  '=',
  '"',
  "'",
  '\\',
  '*',
  'é',
  'ß',
  'Ω',
  '中',
  '日本',
  '\u00a0',
  '\u200b',
  '\ufeff',
  '\uffff',
  '\ue000',
  '😀',
  '👍🏽',
  '👨‍👩‍👧',
  '𝄞',
  'zookeeper',
  'orders',
  '42',
];

function randomName(next: () => number): string {
  const parts = 1 + Math.floor(next() * 6);
  let name = '';
  for (let i = 0; i < parts; i++) name += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)];
  return name;
}

describe('encodeLockName / decodeLockName', () => {
  describe('readable names', () => {
    it.each(['orders', 'job:nightly', 'a-b_c.d~e@f', 'ABCxyz0123456789', '...', '.hidden', 'a.', 'zookeeper'])(
      'leaves %j unchanged',
      (name) => {
        expect(encodeLockName(name)).toBe(name);
        expect(decodeLockName(name)).toBe(name);
      },
    );
  });

  describe('escaping', () => {
    it.each([
      ['orders/42', 'orders%2F42'],
      ['/', '%2F'],
      ['a/b/c', 'a%2Fb%2Fc'],
      ['%', '%25'],
      ['%2F', '%252F'],
      ['.', '%2E'],
      ['..', '%2E%2E'],
      [' ', '%20'],
      ['a b', 'a%20b'],
      ['\u0000', '%00'],
      ['\n', '%0A'],
      ['\u007f', '%7F'],
      ['é', '%C3%A9'],
      ['中', '%E4%B8%AD'],
      ['😀', '%F0%9F%98%80'],
    ])('encodes %j as %j', (name, encoded) => {
      expect(encodeLockName(name)).toBe(encoded);
      expect(decodeLockName(encoded)).toBe(name);
    });

    it('turns a name with slashes into a single path segment', () => {
      const encoded = encodeLockName('orders/42');
      expect(encoded.split('/')).toEqual([encoded]);
      expectValidNodeName(encoded);
    });
  });

  describe('as a property over many generated names', () => {
    const next = prng(0xc0ffee);
    const generated = Array.from({ length: 5000 }, () => randomName(next));
    const names = [...new Set([...FRAGMENTS, ...generated])];

    it('covers the tricky fragments', () => {
      expect(names.length).toBeGreaterThan(1000);
      for (const fragment of ['/', '%', '.', '..', '...', '😀', '\u0000', ' ']) expect(names).toContain(fragment);
    });

    it('is injective: distinct names never share an encoding', () => {
      const owner = new Map<string, string>();
      for (const name of names) {
        const encoded = encodeLockName(name);
        const previous = owner.get(encoded);
        if (previous !== undefined)
          throw new Error(`${JSON.stringify(previous)} and ${JSON.stringify(name)} both encode to ${encoded}`);
        owner.set(encoded, name);
      }
      expect(owner.size).toBe(names.length);
    });

    it('round-trips: decode(encode(x)) === x', () => {
      for (const name of names) expect(decodeLockName(encodeLockName(name))).toBe(name);
    });

    it('always yields a valid ZooKeeper node name', () => {
      for (const name of names) expectValidNodeName(encodeLockName(name));
    });

    it('is deterministic: the same name gives the same encoding after any history of calls, in a fresh load too', () => {
      // By now this module's encoder has run over every name several times. Fixed
      // encodings, worked out by hand from the rules (safe characters kept, UTF-8 bytes
      // as upper-case %XX, the names "." and ".." escaped), must still come out, each
      // time, whatever was encoded in between, and for equal strings built separately.
      const fixed: Array<[string, string]> = [
        ['orders', 'orders'],
        ['a.', 'a.'],
        ['...', '...'],
        ['.hidden', '.hidden'],
        ['job:nightly', 'job:nightly'],
        ['.', '%2E'],
        ['..', '%2E%2E'],
        ['orders/42', 'orders%2F42'],
        ['100%', '100%25'],
        ['a b', 'a%20b'],
        ['x.y/z', 'x.y%2Fz'],
        ['Ωmega', '%CE%A9mega'],
        ['ß', '%C3%9F'],
        ['日本', '%E6%97%A5%E6%9C%AC'],
        ['𝄞', '%F0%9D%84%9E'],
        ['a\u0000b', 'a%00b'],
      ];
      const rebuilt = (name: string): string => String.fromCodePoint(...[...name].map((char) => char.codePointAt(0)!));
      for (let round = 0; round < 3; round++) {
        for (const [name, encoded] of round === 1 ? [...fixed].reverse() : fixed) {
          expect(encodeLockName(name)).toBe(encoded);
          expect(encodeLockName(rebuilt(name))).toBe(encoded);
          expect(encodeLockName(Buffer.from(name, 'utf8').toString('utf8'))).toBe(encoded);
        }
      }

      // Every generated name: what this module says after its history of calls, and twice
      // more in reverse order, equals what a freshly loaded copy of the module says on its
      // very first call for each name (in a different order again).
      const seasoned = names.map((name) => encodeLockName(name));
      const again = [...names]
        .reverse()
        .map((name) => encodeLockName(rebuilt(name)))
        .reverse();
      let fresh: string[] = [];
      jest.isolateModules(() => {
        const { encodeLockName: freshEncode } = require('./lock-name-codec') as typeof import('./lock-name-codec');
        expect(freshEncode).not.toBe(encodeLockName); // a separate copy, with its own state
        const next = prng(7);
        const order = names.map((_, i) => i);
        for (let i = order.length - 1; i > 0; i--) {
          const j = Math.floor(next() * (i + 1));
          [order[i], order[j]] = [order[j], order[i]];
        }
        fresh = new Array<string>(names.length);
        for (const i of order) fresh[i] = freshEncode(names[i]);
      });
      expect(fresh).toHaveLength(names.length);
      for (let i = 0; i < names.length; i++) {
        if (seasoned[i] !== fresh[i] || again[i] !== fresh[i]) {
          throw new Error(
            `${JSON.stringify(names[i])}: ${seasoned[i]}, then ${again[i]}, but ${fresh[i]} from a fresh load`,
          );
        }
      }
    });
  });

  describe('invalid names', () => {
    function expectInvalid(name: unknown, why: RegExp): InvalidLockNameError {
      const error = thrownBy(() => encodeLockName(name));
      expect(error).toBeInstanceOf(InvalidLockNameError);
      expect(error).toBeInstanceOf(ZkLockError);
      expect(error).toBeInstanceOf(Error);
      const invalid = error as InvalidLockNameError;
      expect(invalid.code).toBe('INVALID_LOCK_NAME');
      expect(invalid.name).toBe('InvalidLockNameError');
      expect(invalid.lockName).toBe(name);
      expect(invalid.why).toMatch(why);
      expect(invalid.message).toMatch(why);
      expect(invalid.message).toMatch(/^Invalid lock name /);
      return invalid;
    }

    it('rejects the empty string', () => {
      const error = expectInvalid('', /it is empty/);
      expect(error.message).toContain('""');
    });

    it.each([
      ['undefined', undefined, 'undefined'],
      ['null', null, 'null'],
      ['a number', 42, '42'],
      ['a boolean', true, 'true'],
      ['an object', { name: 'orders' }, 'Object'],
      ['an array', ['orders'], 'an array'],
      ['a String object', new String('orders'), 'String'],
      ['a symbol', Symbol('orders'), 'Symbol'],
    ])('rejects %s', (_label, value, shown) => {
      const error = expectInvalid(value, /must be a string/);
      expect(error.message).toContain(shown);
    });

    it.each([
      ['a lone high surrogate', '\ud800'],
      ['a lone low surrogate', '\udfff'],
      ['a high surrogate at the end', 'orders\ud83d'],
      ['a low surrogate in the middle', 'a\ude00b'],
      ['a reversed pair', '\ude00\ud83d'],
    ])('rejects %s', (_label, name) => {
      expectInvalid(name, /lone UTF-16 surrogate/);
    });

    it('accepts a properly paired surrogate', () => {
      expect(encodeLockName('\ud83d\ude00')).toBe('%F0%9F%98%80');
    });

    it(`accepts names that encode to exactly ${MAX_ENCODED_NAME_LENGTH} characters`, () => {
      expect(MAX_ENCODED_NAME_LENGTH).toBe(1024);
      expect(encodeLockName('a'.repeat(1024))).toHaveLength(1024);
      // 341 × "%2F" = 1023 characters, plus one safe character.
      expect(encodeLockName('/'.repeat(341) + 'a')).toHaveLength(1024);
    });

    it('rejects a plain name one character too long', () => {
      const error = expectInvalid('a'.repeat(1025), /encodes to 1025 characters, over the limit of 1024/);
      expect(error.message).toContain('shorter name');
    });

    it('counts the escaped length, not the raw length', () => {
      // 342 characters, but 342 × 3 = 1026 once escaped.
      expectInvalid('/'.repeat(342), /encodes to 1026 characters/);
      // 86 emoji = 172 UTF-16 units, but 86 × 12 = 1032 once escaped.
      expectInvalid('😀'.repeat(86), /encodes to 1032 characters/);
    });
  });
});
