import { randomUUID } from 'node:crypto';

import { orderQueue } from './lock-queue.js';
import { lockNodePrefix, newAttemptGuid, parseLockNode, READ_MARKER, WRITE_MARKER } from './lock-node.js';
import { newLockNodePrefix, revocationOptInOf } from './node-format.js';

// A guid as Kazoo writes it (uuid4().hex): 32 lower-case hex characters.
const GUID = '0123456789abcdef0123456789abcdef';
// A uuid as Curator's protection writes it (UUID.randomUUID().toString()).
const UUID = '2c5e0b7a-9d41-4f3e-8a6b-0c1d2e3f4a5b';

describe('lock node naming (Kazoo format)', () => {
  describe('markers', () => {
    it('uses Kazoo’s markers', () => {
      expect(WRITE_MARKER).toBe('__lock__');
      expect(READ_MARKER).toBe('__rlock__');
    });
  });

  describe('newAttemptGuid', () => {
    it('is 32 lower-case hex characters', () => {
      for (let i = 0; i < 50; i++) expect(newAttemptGuid()).toMatch(/^[0-9a-f]{32}$/);
    });

    it('is different on every call', () => {
      const guids = new Set(Array.from({ length: 1000 }, () => newAttemptGuid()));
      expect(guids.size).toBe(1000);
    });
  });

  describe('lockNodePrefix', () => {
    it('appends __lock__ for a writer', () => {
      expect(lockNodePrefix(GUID, 'write')).toBe(`${GUID}__lock__`);
    });

    it('appends __rlock__ for a reader', () => {
      expect(lockNodePrefix(GUID, 'read')).toBe(`${GUID}__rlock__`);
    });

    it('makes prefixes of which neither mode is a prefix of the other', () => {
      const write = lockNodePrefix(GUID, 'write');
      const read = lockNodePrefix(GUID, 'read');
      expect(read.startsWith(write)).toBe(false);
      expect(write.startsWith(read)).toBe(false);
    });
  });

  describe('parseLockNode', () => {
    it('parses a write node', () => {
      expect(parseLockNode(`${GUID}__lock__0000000010`)).toEqual({
        node: `${GUID}__lock__0000000010`,
        mode: 'write',
        sequence: 10,
        format: 'kazoo',
      });
    });

    it('parses a read node', () => {
      expect(parseLockNode(`${GUID}__rlock__0000000003`)).toEqual({
        node: `${GUID}__rlock__0000000003`,
        mode: 'read',
        sequence: 3,
        format: 'kazoo',
      });
    });

    it.each([
      ['0000000000', 0],
      ['0000000009', 9],
      ['0000000010', 10],
      ['0000012345', 12345],
      ['2147483647', 2147483647],
      ['-2147483648', -2147483648],
      ['-000000001', -1],
    ])('reads the suffix %s as the number %d', (suffix, sequence) => {
      const parsed = parseLockNode(`${GUID}__lock__${suffix}`);
      expect(parsed?.sequence).toBe(sequence);
      expect(typeof parsed?.sequence).toBe('number');
    });

    it('parses what lockNodePrefix plus a server sequence makes, in both modes', () => {
      for (const mode of ['read', 'write'] as const) {
        const node = `${lockNodePrefix(GUID, mode)}0000000042`;
        expect(parseLockNode(node)).toEqual({ node, mode, sequence: 42, format: 'kazoo' });
      }
    });

    it('parses a node written by Kazoo (uuid4().hex before the marker)', () => {
      const node = `${'0123456789abcdef'.repeat(2)}__rlock__0000000002`;
      expect(parseLockNode(node)).toEqual({ node, mode: 'read', sequence: 2, format: 'kazoo' });
    });

    it.each([
      ['an unrelated child', 'lease_holder'],
      ['an empty name', ''],
      ['a bare guid', GUID],
      ['a marker without sequence', `${GUID}__lock__`],
      ['a read marker without sequence', `${GUID}__rlock__`],
      ['a non-numeric sequence', `${GUID}__lock__00000000x1`],
      ['trailing text after the sequence', `${GUID}__lock__0000000001x`],
      ['a lone minus sign', `${GUID}__lock__-`],
      ['another marker', `${GUID}__wlock__0000000001`],
      ['a single underscore marker', `${GUID}_lock_0000000001`],
      ['a Curator node with a short uuid', '_c_8b1b6c9e-lock-0000000001'],
      ['a Curator node without its protection prefix', 'lock-0000000001'],
      ['a Curator node with an upper-case uuid', `_c_${UUID.toUpperCase()}-lock-0000000001`],
      ['a Curator leader latch node', `_c_${UUID}-latch-0000000001`],
      ['a Curator semaphore lease node', `_c_${UUID}-lease-0000000001`],
      ['a Curator marker of the wrong case', `_c_${UUID}-__writ__0000000001`],
      ['a foreign node without a guid, which would jump the queue', '__lock__0000000000'],
      ['a foreign node with a short prefix', 'x__lock__0000000000'],
      ['a suffix shorter than ten digits', `${GUID}__lock__0`],
      ['a suffix longer than ten digits', `${GUID}__lock__00000000001`],
      ['an upper-case guid', `${GUID.toUpperCase()}__lock__0000000001`],
      ['text before a valid node', `x${GUID}__lock__0000000001`],
    ])('returns null for %s', (_label, node) => {
      expect(parseLockNode(node)).toBeNull();
    });
  });

  describe('Curator formats', () => {
    it.each([
      [`_c_${UUID}-lock-0000000007`, 'write', 'curator-mutex'],
      [`_c_${UUID}-__WRIT__0000000007`, 'write', 'curator-rw'],
      [`_c_${UUID}-__READ__0000000007`, 'read', 'curator-rw'],
    ])('parses %s as a %s node of %s', (node, mode, format) => {
      expect(parseLockNode(node)).toEqual({ node, mode, sequence: 7, format });
    });

    it('orders every format by the one sequence counter', () => {
      const queue = orderQueue([
        `_c_${UUID}-__READ__0000000003`,
        `${GUID}__lock__0000000002`,
        `_c_${UUID}-lock-0000000000`,
        `${GUID}__rlock__0000000001`,
      ]);
      expect(queue.map((entry) => [entry.sequence, entry.format])).toEqual([
        [0, 'curator-mutex'],
        [1, 'kazoo'],
        [2, 'kazoo'],
        [3, 'curator-rw'],
      ]);
    });
  });

  describe('newLockNodePrefix', () => {
    it.each([
      ['kazoo', 'write', /^[0-9a-f]{32}__lock__$/],
      ['kazoo', 'read', /^[0-9a-f]{32}__rlock__$/],
      ['curator-mutex', 'write', /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-$/],
      ['curator-rw', 'write', /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-__WRIT__$/],
      ['curator-rw', 'read', /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-__READ__$/],
    ] as const)('names a %s %s node as the other client does, and parses it back', (format, mode, pattern) => {
      const prefix = newLockNodePrefix(mode, format);
      expect(prefix).toMatch(pattern);
      expect(parseLockNode(`${prefix}0000000042`)).toEqual({ node: `${prefix}0000000042`, mode, sequence: 42, format });
      expect(newLockNodePrefix(mode, format)).not.toBe(prefix); // a fresh guid each attempt
    });

    it.each(['kazoo', 'curator-mutex', 'curator-rw'] as const)(
      "a %s name says whether its holder opted in to revocation; another client's random guid says nothing",
      (format) => {
        const revocable = newLockNodePrefix('write', format, true);
        const not = newLockNodePrefix('write', format);
        expect(revocationOptInOf(`${revocable}0000000001`)).toBe('revocable');
        expect(revocationOptInOf(`${not}0000000001`)).toBe('not-revocable');
        expect(parseLockNode(`${revocable}0000000001`)).toMatchObject({ format, sequence: 1 });
        expect(revocable.slice(-30)).not.toBe(newLockNodePrefix('write', format, true).slice(-30)); // still random
        // Kazoo's uuid4().hex and Curator's protected uuid, as those clients name their nodes.
        const foreign = format === 'kazoo' ? randomUUID().replace(/-/g, '') : `_c_${randomUUID()}`;
        expect(revocationOptInOf(`${foreign}${not.slice(foreign.length)}0000000001`)).toBe('unknown');
      },
    );
  });

  describe('the fast path for common names', () => {
    // The definition, written out independently of the parser: whole name, one of five
    // markers, ZooKeeper's %010d sequence (negative when the counter wrapped).
    const SEQ = String.raw`(\d{10}|-\d{9,10})`;
    const DEFINITION = [
      new RegExp(String.raw`^[0-9a-f]{32}(__lock__|__rlock__)${SEQ}$`),
      new RegExp(String.raw`^_c_[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-(lock-|__WRIT__|__READ__)${SEQ}$`),
    ];
    const KINDS: Record<string, { mode: string; format: string }> = {
      __lock__: { mode: 'write', format: 'kazoo' },
      __rlock__: { mode: 'read', format: 'kazoo' },
      'lock-': { mode: 'write', format: 'curator-mutex' },
      __WRIT__: { mode: 'write', format: 'curator-rw' },
      __READ__: { mode: 'read', format: 'curator-rw' },
    };
    const expected = (node: string): unknown => {
      for (const pattern of DEFINITION) {
        const match = pattern.exec(node);
        if (match) return { node, ...KINDS[match[match.length - 2]], sequence: Number(match[match.length - 1]) };
      }
      return null;
    };
    const names = [
      `${GUID}__lock__0000000042`,
      `${GUID}__rlock__2147483646`,
      `${GUID}__lock__-000000001`,
      `${GUID}__rlock__-2147483648`,
      `_c_${UUID}-lock-0000000007`,
      `_c_${UUID}-__WRIT__0000000007`,
      `_c_${UUID}-__READ__1234567890`,
      `_c_${UUID}-__READ__-000000003`,
    ];
    // Every name with each character changed to each of a few others, dropped, or doubled.
    const variants = names.flatMap((name) =>
      [...name].flatMap((_, i) => [
        ...['0', '9', '/', ':', 'a', 'f', '`', 'g', 'A', '-', '_', 'x'].map(
          (c) => name.slice(0, i) + c + name.slice(i + 1),
        ),
        name.slice(0, i) + name.slice(i + 1),
        name.slice(0, i) + name[i] + name.slice(i),
      ]),
    );

    it('gives the same answer as the definition for every name and variant', () => {
      const cases = [...names, ...variants];
      expect(cases.length).toBeGreaterThan(4000);
      expect(cases.filter((node) => expected(node) !== null).length).toBeGreaterThan(names.length * 10);
      for (const node of cases) expect([node, parseLockNode(node)]).toEqual([node, expected(node)]);
    });
  });
});
