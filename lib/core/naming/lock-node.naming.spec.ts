import { lockNodePrefix, newAttemptGuid, parseLockNode, READ_MARKER, WRITE_MARKER } from './lock-node.naming.js';

// A guid as Kazoo writes it (uuid4().hex): 32 lower-case hex characters.
const GUID = '0123456789abcdef0123456789abcdef';

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
      });
    });

    it('parses a read node', () => {
      expect(parseLockNode(`${GUID}__rlock__0000000003`)).toEqual({
        node: `${GUID}__rlock__0000000003`,
        mode: 'read',
        sequence: 3,
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
        expect(parseLockNode(node)).toEqual({ node, mode, sequence: 42 });
      }
    });

    it('parses a node written by Kazoo (uuid4().hex before the marker)', () => {
      const node = `${'0123456789abcdef'.repeat(2)}__rlock__0000000002`;
      expect(parseLockNode(node)).toEqual({ node, mode: 'read', sequence: 2 });
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
      ['a Curator-style node', '_c_8b1b6c9e-lock-0000000001'],
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
});
