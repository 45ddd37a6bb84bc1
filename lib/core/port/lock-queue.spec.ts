import { lockNodePrefix, RETIRE_SEQUENCE } from './lock-node.js';
import { blockerAt, holdingIn, nodesWithPrefix, orderQueue, positionOf } from './lock-queue.js';
import { newKeptHoldNode } from './kept-hold.js';
import type { LockMode } from './lock-backend.js';

/** ZooKeeper's `%010d` rendering of a sequence number. */
function seqSuffix(sequence: number): string {
  return sequence < 0 ? `-${String(-sequence).padStart(9, '0')}` : String(sequence).padStart(10, '0');
}

/** A 32-hex guid made of one repeated digit, so tests can control lexical order. */
function guidOf(digit: string): string {
  return digit.repeat(32);
}

function lockNode(mode: LockMode, sequence: number, guid = guidOf('a')): string {
  return lockNodePrefix(guid, mode) + seqSuffix(sequence);
}

const NOISE = ['lease_holder', 'readme', `${guidOf('e')}__lock__`, `${guidOf('e')}__lock__12ab`];

describe('lock queue', () => {
  describe('orderQueue', () => {
    it('returns an empty queue for no children', () => {
      expect(orderQueue([])).toEqual([]);
    });

    it('sorts by sequence as a number, not by name', () => {
      // Lexically, the "f…" guid sorts after the "0…" guid; numerically 9 comes first.
      const nine = lockNode('write', 9, guidOf('f'));
      const ten = lockNode('write', 10, guidOf('0'));
      expect([ten, nine].sort()).toEqual([ten, nine]);
      expect(orderQueue([ten, nine]).map((e) => e.node)).toEqual([nine, ten]);
      expect(orderQueue([nine, ten]).map((e) => e.node)).toEqual([nine, ten]);
    });

    it('sorts by sequence when the markers would order the names the other way', () => {
      // Same guid: "__lock__" < "__rlock__" lexically, but the reader came first.
      const reader = lockNode('read', 9);
      const writer = lockNode('write', 10);
      expect([reader, writer].sort()).toEqual([writer, reader]);
      expect(orderQueue([writer, reader]).map((e) => e.node)).toEqual([reader, writer]);
    });

    it('does not queue unpadded suffixes: ZooKeeper always writes ten digits, so such a node is foreign', () => {
      expect(orderQueue([`${guidOf('1')}__lock__10`, `${guidOf('1')}__lock__9`])).toEqual([]);
    });

    it('orders negative (wrapped) sequences numerically', () => {
      // Lexically "-2147483647" < "-2147483648"; numerically it is the other way round.
      const a = lockNode('write', -2147483647, guidOf('1'));
      const b = lockNode('write', -2147483648, guidOf('1'));
      expect([a, b].sort()).toEqual([a, b]);
      expect(orderQueue([a, b]).map((e) => e.sequence)).toEqual([-2147483648, -2147483647]);
    });

    it('sorts a larger shuffled queue with mixed guids and modes', () => {
      const sequences = [0, 1, 2, 8, 9, 10, 11, 99, 100, 101, 999, 1000, 123456, 2147483647];
      const digits = 'fedcba9876543210';
      const nodes = sequences.map((s, i) =>
        lockNode(i % 3 === 0 ? 'read' : 'write', s, guidOf(digits[i % digits.length])),
      );
      const shuffled = [...nodes].reverse();
      shuffled.push(shuffled.shift()!, shuffled.shift()!);
      const queue = orderQueue(shuffled);
      expect(queue.map((e) => e.sequence)).toEqual(sequences);
      expect(queue.map((e) => e.node)).toEqual(nodes);
    });

    it('ignores children that are not lock nodes', () => {
      const writer = lockNode('write', 2);
      const reader = lockNode('read', 1);
      const queue = orderQueue([...NOISE, writer, 'x', reader]);
      expect(queue).toEqual([
        { node: reader, mode: 'read', sequence: 1, format: 'kazoo' },
        { node: writer, mode: 'write', sequence: 2, format: 'kazoo' },
      ]);
    });

    it('never breaks equal sequences by name: ties keep the listing order', () => {
      const a = lockNode('write', 2147483647, guidOf('1'));
      const b = lockNode('write', 2147483647, guidOf('2'));
      expect(orderQueue([b, a]).map((e) => e.node)).toEqual([b, a]);
      expect(orderQueue([a, b]).map((e) => e.node)).toEqual([a, b]);
    });

    it('does not modify the children array', () => {
      const children = [lockNode('write', 10), lockNode('write', 9)];
      const copy = [...children];
      orderQueue(children);
      expect(children).toEqual(copy);
    });
  });

  describe('blockerAt / positionOf', () => {
    /**
     * `layout` lists the queue in sequence order (R = reader, W = writer); `blockers[i]` is
     * the index of the node that blocks entry i, or null if it holds. Sequences start at 8
     * so they cross 9 -> 10, and guids run from "f…" down so that name order is the
     * reverse of queue order.
     */
    const cases: Array<[layout: string, blockers: Array<number | null>]> = [
      ['W', [null]],
      ['R', [null]],
      ['R R R', [null, null, null]],
      ['W W', [null, 0]],
      ['W W W', [null, 0, 1]],
      ['R W', [null, 0]],
      ['W R', [null, 0]],
      ['R R W', [null, null, 1]],
      ['R R W R', [null, null, 1, 2]],
      ['W R R', [null, 0, 0]],
      ['R W W R', [null, 0, 1, 2]],
      ['W R W', [null, 0, 1]],
      ['R W R W R', [null, 0, 1, 2, 3]],
      ['W R W R R', [null, 0, 1, 2, 2]],
      ['R R W R R W R', [null, null, 1, 2, 2, 4, 5]],
      ['W W R R R', [null, 0, 1, 1, 1]],
    ];

    function build(layout: string): string[] {
      const modes = layout.split(' ');
      const digits = 'fedcba9876543210';
      return modes.map((m, i) => lockNode(m === 'W' ? 'write' : 'read', 8 + i, guidOf(digits[i])));
    }

    it.each(cases)('blockerAt in "%s"', (layout, blockers) => {
      const nodes = build(layout);
      const queue = orderQueue([...nodes].reverse());
      expect(queue.map((e) => e.node)).toEqual(nodes);
      const actual = queue.map((_, i) => blockerAt(queue, i)?.node ?? null);
      expect(actual).toEqual(blockers.map((b) => (b === null ? null : nodes[b])));
    });

    it.each(cases)('positionOf in "%s" (shuffled, with noise)', (layout, blockers) => {
      const nodes = build(layout);
      const children = [NOISE[0], ...[...nodes].reverse(), ...NOISE.slice(1)];
      nodes.forEach((node, i) => {
        const b = blockers[i];
        const expected = b === null ? { kind: 'holding' } : { kind: 'waiting', blocker: orderQueue([nodes[b]])[0] };
        expect(positionOf(children, node)).toEqual(expected);
      });
    });

    it('lets several readers at the head hold together', () => {
      const children = build('R R R W R');
      expect(children.slice(0, 3).map((n) => positionOf(children, n).kind)).toEqual(['holding', 'holding', 'holding']);
    });

    it('never blocks a reader by a higher writer (Kazoo bug #649)', () => {
      const children = build('R W W W');
      expect(positionOf(children, children[0])).toEqual({ kind: 'holding' });
    });

    it('blocks a reader by the nearest lower writer, not the first one', () => {
      const children = build('W W R');
      const position = positionOf(children, children[2]);
      expect(position.kind === 'waiting' && position.blocker.node).toBe(children[1]);
    });

    it('blocks a writer by its immediate predecessor even when that is a reader', () => {
      const children = build('W R W');
      const position = positionOf(children, children[2]);
      expect(position).toEqual({
        kind: 'waiting',
        blocker: { node: children[1], mode: 'read', sequence: 9, format: 'kazoo' },
      });
    });

    it('uses numeric order to find the blocker (9 blocks 10)', () => {
      const writer9 = lockNode('write', 9, guidOf('f'));
      const reader10 = lockNode('read', 10, guidOf('0'));
      expect(positionOf([reader10, writer9], reader10)).toEqual({
        kind: 'waiting',
        blocker: { node: writer9, mode: 'write', sequence: 9, format: 'kazoo' },
      });
      expect(positionOf([reader10, writer9], writer9)).toEqual({ kind: 'holding' });
    });

    it('reports a node absent from the children as missing', () => {
      const children = build('W R');
      expect(positionOf(children, lockNode('write', 99, guidOf('9')))).toEqual({ kind: 'missing' });
      expect(positionOf([], lockNode('write', 1))).toEqual({ kind: 'missing' });
    });

    it('reports a child that is not a lock node as missing', () => {
      expect(positionOf(['lease_holder', ...build('W')], 'lease_holder')).toEqual({ kind: 'missing' });
    });
  });

  describe('Curator nodes', () => {
    const uuid = '2c5e0b7a-9d41-4f3e-8a6b-0c1d2e3f4a5b';
    const curator = (marker: string, sequence: number): string => `_c_${uuid}-${marker}${seqSuffix(sequence)}`;

    it('queues our nodes behind a Curator mutex holder, whatever our format', () => {
      const holder = curator('lock-', 4);
      for (const ours of [lockNode('write', 5), lockNode('read', 5), curator('__READ__', 5)]) {
        expect(positionOf([ours, holder], ours)).toMatchObject({
          kind: 'waiting',
          blocker: { node: holder, mode: 'write', format: 'curator-mutex' },
        });
      }
    });

    it("handles a downgrade read numbered as its writer's (later Curator releases): our writer waits for both, our reader only for the writer", () => {
      const [write5, read5] = [curator('__WRIT__', 5), curator('__READ__', 5)];
      const ourWriter = lockNode('write', 7);
      const ourReader = lockNode('read', 8);
      for (const children of [
        [write5, read5, ourWriter],
        [read5, write5, ourWriter],
      ]) {
        expect(positionOf(children, ourWriter).kind).toBe('waiting');
      }
      expect(positionOf([read5, ourWriter], ourWriter)).toMatchObject({ kind: 'waiting', blocker: { node: read5 } });
      expect(positionOf([write5, read5, ourReader], ourReader)).toMatchObject({
        kind: 'waiting',
        blocker: { node: write5 },
      });
      expect(positionOf([read5, ourReader], ourReader)).toEqual({ kind: 'holding' });
    });
  });

  describe('the counter limit', () => {
    it('never grants a node that shares its sequence (the counter stopped at 2^31 - 1), whichever sorts first', () => {
      const holder = lockNode('write', 2147483647, guidOf('f'));
      const newcomer = lockNode('write', 2147483647, guidOf('0'));
      for (const children of [
        [holder, newcomer],
        [newcomer, holder],
      ]) {
        expect(positionOf(children, newcomer)).toEqual({ kind: 'retire' });
        expect(positionOf(children, holder)).toEqual({ kind: 'retire' });
      }
    });

    it('never grants a node with a wrapped, negative sequence, though it sorts first', () => {
      const holder = lockNode('write', 2147483000, guidOf('f'));
      const wrapped = lockNode('write', -2147483648, guidOf('0'));
      expect(orderQueue([holder, wrapped]).map((e) => e.node)).toEqual([wrapped, holder]);
      expect(positionOf([holder, wrapped], wrapped)).toEqual({ kind: 'retire' });
    });

    it('retires nodes numbered from RETIRE_SEQUENCE on, and keeps granting those below it in order', () => {
      const last = lockNode('write', RETIRE_SEQUENCE - 1, guidOf('f'));
      const first = lockNode('write', RETIRE_SEQUENCE, guidOf('0'));
      expect(positionOf([first, last], last)).toEqual({ kind: 'holding' });
      expect(positionOf([first, last], first)).toEqual({ kind: 'retire' });
    });
  });

  describe('nodesWithPrefix', () => {
    const g1 = guidOf('1');
    const g2 = guidOf('2');
    const children = [
      lockNode('write', 1, g1),
      'lease_holder',
      lockNode('read', 2, g2),
      lockNode('write', 3, guidOf('3')),
    ];

    it('finds the node carrying the guid and marker', () => {
      expect(nodesWithPrefix(children, lockNodePrefix(g2, 'read'))).toEqual([lockNode('read', 2, g2)]);
      expect(nodesWithPrefix(children, lockNodePrefix(g1, 'write'))).toEqual([lockNode('write', 1, g1)]);
    });

    it('finds every node carrying the guid (a create repeated after a lost reply), lowest first', () => {
      const extra = lockNode('write', 7, g1);
      expect(nodesWithPrefix([extra, ...children], lockNodePrefix(g1, 'write'))).toEqual([
        lockNode('write', 1, g1),
        extra,
      ]);
    });

    it('does not match the same guid in the other mode', () => {
      expect(nodesWithPrefix(children, lockNodePrefix(g2, 'write'))).toEqual([]);
      expect(nodesWithPrefix(children, lockNodePrefix(g1, 'read'))).toEqual([]);
    });

    it('returns nothing when no child carries the guid', () => {
      expect(nodesWithPrefix(children, lockNodePrefix(guidOf('9'), 'write'))).toEqual([]);
      expect(nodesWithPrefix([], lockNodePrefix(g1, 'write'))).toEqual([]);
    });

    it('ignores a child that starts with the prefix but is not a lock node', () => {
      const prefix = lockNodePrefix(g1, 'write');
      expect(nodesWithPrefix([prefix, `${prefix}oops`], prefix)).toEqual([]);
      expect(nodesWithPrefix([prefix, `${prefix}oops`, `${prefix}0000000007`], prefix)).toEqual([
        `${prefix}0000000007`,
      ]);
    });
  });

  describe('a kept hold’s marker', () => {
    const marker = newKeptHoldNode();
    const persistent = newKeptHoldNode(true);

    it('is no lock node, and blocks only the node that would hold, of either mode', () => {
      const [w1, r2, r3] = [lockNode('write', 1), lockNode('read', 2), lockNode('read', 3)];
      expect(orderQueue([marker, persistent, w1]).map((entry) => entry.node)).toEqual([w1]);
      expect(positionOf([marker, w1, r2], w1)).toEqual({ kind: 'kept', marker });
      expect(positionOf([w1, r2, persistent], w1)).toEqual({ kind: 'kept', marker: persistent });
      expect(positionOf([marker, w1, r2], r2)).toMatchObject({ kind: 'waiting', blocker: { node: w1 } });
      expect(positionOf([marker, r2, r3], r3)).toEqual({ kind: 'kept', marker }); // readers too
      expect(positionOf([r2, r3], r3)).toEqual({ kind: 'holding' });
    });

    it('leaves no holder in a listing while it lasts', () => {
      const children = [marker, lockNode('read', 2), lockNode('read', 3)];
      const queue = orderQueue(children);
      expect(queue.map((_, i) => holdingIn(children, queue)(i))).toEqual([false, false]);
      expect(queue.map((_, i) => holdingIn(children.slice(1), queue)(i))).toEqual([true, true]);
    });

    it('sorts before every sequence in Curator’s order (after the last `lock-`, or after `__WRIT__`) and in Kazoo’s (the `__lock__` ending)', () => {
      // Curator's StandardLockInternalsDriver.fixForSorting, and Kazoo 2.8's contender pattern.
      const curatorKey = (node: string, lockName: string): string =>
        node.lastIndexOf(lockName) >= 0 ? node.slice(node.lastIndexOf(lockName) + lockName.length) : node;
      const kazooKey = (node: string): string | undefined => /(?:__lock__|__rlock__)(-?\d{10})$/.exec(node)?.[1];
      for (const sequence of ['0000000000', '0000000007', '2147483647', '-000000001']) {
        expect(curatorKey(marker, 'lock-') < sequence).toBe(true);
        expect(curatorKey(curatorKey(marker, '__READ__'), '__WRIT__') < sequence).toBe(true);
        expect(marker.includes('__WRIT__')).toBe(true); // a writer to Curator's readers
        expect(kazooKey(marker)! <= sequence).toBe(true);
      }
      // The persistent one, left at close: ignored by both (sorts last for Curator, no match for Kazoo).
      expect(curatorKey(persistent, 'lock-') > '9999999999').toBe(true);
      expect(kazooKey(persistent)).toBeUndefined();
    });
  });
});
