import { RETIRE_SEQUENCE } from './lock-node.js';
import { isKazooLeaseNode, leaseNodePrefix, parseLeaseNode } from './lease-node.js';
import { leaseNodesWithPrefix, leasePositionOf, orderLeases } from './lease-queue.js';

const guid = (n: number): string => n.toString(16).padStart(32, '0');
const node = (n: number, sequence = n): string => `${leaseNodePrefix(guid(n))}${String(sequence).padStart(10, '0')}`;

describe('lease node names', () => {
  it('parses <32 hex guid>__lease__<10 digits> (and a wrapped, negative counter), nothing else', () => {
    expect(parseLeaseNode(node(7, 42))).toEqual({ node: node(7, 42), sequence: 42 });
    expect(parseLeaseNode(`${guid(1)}__lease__-000000012`)).toMatchObject({ sequence: -12 });
    for (const other of [
      `${guid(1)}__lock__0000000001`,
      `${guid(1)}__rlock__0000000001`,
      `${guid(1)}__lease__1`,
      `${'ABCDEF'.padStart(32, '0')}__lease__0000000001`,
      'probe',
      guid(1),
    ]) {
      expect(parseLeaseNode(other)).toBeNull();
    }
  });

  it("recognises Kazoo Semaphore's lease nodes: a bare 32-hex uuid", () => {
    expect(isKazooLeaseNode(guid(5))).toBe(true);
    expect(isKazooLeaseNode(node(5))).toBe(false);
    expect(isKazooLeaseNode(`${guid(5)}__lock__0000000001`)).toBe(false);
  });
});

describe('leasePositionOf (who holds, who waits, what each watches)', () => {
  const queue = [node(0), node(1), node(2), node(3), node(4)];

  it('orders by sequence as a number, ignoring children that are not lease nodes', () => {
    const children = [node(3, 10), 'probe', node(1, 9), `${guid(2)}__lock__0000000001`, node(2, 100)];
    expect(orderLeases(children).map((e) => e.sequence)).toEqual([9, 10, 100]);
  });

  it('the first maxLeases hold; a holder knows whether anyone queues behind it', () => {
    expect(leasePositionOf(queue, node(0), 2)).toEqual({ kind: 'holding', successor: true });
    expect(leasePositionOf(queue, node(1), 2)).toEqual({ kind: 'holding', successor: true });
    expect(leasePositionOf(queue, node(4), 5)).toEqual({ kind: 'holding', successor: false });
    expect(leasePositionOf([node(0)], node(0), 1)).toEqual({ kind: 'holding', successor: false });
  });

  it('the first waiter is the head (it watches the children); later waiters watch the node just ahead', () => {
    expect(leasePositionOf(queue, node(2), 2)).toEqual({ kind: 'head' });
    expect(leasePositionOf(queue, node(3), 2)).toEqual({
      kind: 'waiting',
      predecessor: { node: node(2), sequence: 2 },
      deputy: true,
    });
    expect(leasePositionOf(queue, node(4), 2)).toEqual({
      kind: 'waiting',
      predecessor: { node: node(3), sequence: 3 },
      deputy: false,
    });
    expect(leasePositionOf(queue, node(1), 1)).toEqual({ kind: 'head' });
    expect(leasePositionOf(queue, node(2), 1)).toMatchObject({ kind: 'waiting', deputy: true });
  });

  it('max=2, [A,B,C,D]: C and A leave, D holds though B is still there', () => {
    const [a, b, c, d] = queue;
    expect(leasePositionOf([a, b, c, d], d, 2)).toMatchObject({ kind: 'waiting', predecessor: { node: c } });
    expect(leasePositionOf([b, d], d, 2)).toEqual({ kind: 'holding', successor: false });
    expect(leasePositionOf([a, b, d], d, 2)).toEqual({ kind: 'head' }); // C gave up first: D heads the line
  });

  it('a node missing from the children is missing', () => {
    expect(leasePositionOf(queue, node(9), 2)).toEqual({ kind: 'missing' });
  });

  it('never grants a node past the counter’s safe range or sharing its number; such nodes only add to the count ahead', () => {
    const late = node(8, RETIRE_SEQUENCE);
    expect(leasePositionOf([late], late, 3)).toEqual({ kind: 'retire' });
    const twin = [node(1, 5), node(2, 5)];
    expect(leasePositionOf(twin, twin[0], 3)).toEqual({ kind: 'retire' });
    const wrapped = `${guid(9)}__lease__-000000001`;
    expect(leasePositionOf([node(0), wrapped], wrapped, 3)).toEqual({ kind: 'retire' });
    // The wrapped node sorts first: it pushes others back (a delay), never lets one more in.
    expect(leasePositionOf([node(0), node(1), wrapped], node(1), 2)).toEqual({ kind: 'head' });
  });

  it("finds an attempt's own nodes by its prefix, lowest first", () => {
    const prefix = leaseNodePrefix(guid(7));
    const children = [node(1), `${prefix}0000000009`, `${prefix}0000000004`, `${guid(7)}__lock__0000000001`];
    expect(leaseNodesWithPrefix(children, prefix)).toEqual([`${prefix}0000000004`, `${prefix}0000000009`]);
  });
});
