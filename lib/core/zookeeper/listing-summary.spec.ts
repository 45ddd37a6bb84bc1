import { leaseDirectoryData } from './queue/directory-marker.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { orderQueue } from '../port/lock-queue.js';
import {
  leaseListingOf,
  lockListingOf,
  lockNameOfDirectory,
  maxLeasesOf,
  shapeOf,
  type NodeFacts,
} from './listing-summary.js';

const GUID = '0123456789abcdef0123456789abcdef';
const w = (seq: number): string => `${GUID}__lock__${String(seq).padStart(10, '0')}`;
const r = (seq: number): string => `${GUID}__rlock__${String(seq).padStart(10, '0')}`;
const lease = (seq: number): string => `${GUID}__lease__${String(seq).padStart(10, '0')}`;
const facts = (nodes: string[]): Map<string, NodeFacts> =>
  new Map(nodes.map((node, i) => [node, { identity: `id-${i}`, since: new Date(1000 + i) }]));

describe('lockNameOfDirectory', () => {
  it.each(['orders', 'orders/42', 'job:nightly', '..', '.', 'café ü', '%', 'a%2Fb'])(
    'gives back the name %j from its directory',
    (name) => {
      expect(lockNameOfDirectory(encodeLockName(name))).toBe(name);
    },
  );

  it.each([
    ['a space, which we would escape', 'a b'],
    ['a lower-case escape', 'a%2fb'],
    ['a malformed escape', 'bad%zz'],
    ['an escaped safe character', '%41'],
    ['an unescaped dot-dot', '..'],
    ['invalid UTF-8', '%C3'],
  ])('refuses %s (%j): not a directory this library named', (_, directory) => {
    expect(lockNameOfDirectory(directory)).toBeNull();
  });
});

describe('shapeOf', () => {
  it('takes lock nodes in sequence order, ignoring anything else', () => {
    expect(shapeOf([w(3), 'readme', r(1), '_c_x-lock-0000000000'])).toEqual({
      kind: 'lock',
      queue: orderQueue([r(1), w(3)]),
      kept: false,
    });
  });

  it('falls back to lease nodes, in sequence order, and to null when there is nothing of ours', () => {
    expect(shapeOf([lease(2), lease(1), 'x'])).toEqual({
      kind: 'lease',
      leases: [
        { node: lease(1), sequence: 1 },
        { node: lease(2), sequence: 2 },
      ],
    });
    expect(shapeOf([])).toBeNull();
    expect(shapeOf(['readme', 'lease-0000000001'])).toBeNull();
  });

  it('lists lock nodes, not leases, in a directory that has both', () => {
    expect(shapeOf([lease(1), w(2)])?.kind).toBe('lock');
  });
});

describe('lockListingOf', () => {
  it('splits holders from waiters by the recipe: readers up to the first writer hold', () => {
    const nodes = [r(1), r(2), w(3), r(4)];
    const listing = lockListingOf('doc', orderQueue(nodes), facts(nodes))!;
    expect(listing.holders.map((e) => [e.node, e.mode, e.identity, e.since.getTime()])).toEqual([
      [r(1), 'read', 'id-0', 1000],
      [r(2), 'read', 'id-1', 1001],
    ]);
    expect(listing.waiters.map((e) => [e.sequence, e.holding])).toEqual([
      [3, false],
      [4, false],
    ]);
    expect(listing).toMatchObject({ kind: 'lock', name: 'doc' });
  });

  it('leaves out nodes without facts (gone between the reads), deciding who holds on the queue as read', () => {
    const nodes = [w(1), w(2)];
    const listing = lockListingOf('doc', orderQueue(nodes), new Map([[w(2), { identity: null, since: new Date(0) }]]))!;
    expect(listing.holders).toEqual([]);
    expect(listing.waiters.map((e) => e.node)).toEqual([w(2)]);
    expect(lockListingOf('doc', orderQueue(nodes), new Map())).toBeNull();
  });
});

describe('leaseListingOf and maxLeasesOf', () => {
  const leases = [1, 2, 3].map((seq) => ({ node: lease(seq), sequence: seq }));

  it('the maxLeases lowest hold', () => {
    const listing = leaseListingOf('pool', leases, 2, facts(leases.map((l) => l.node)))!;
    expect(listing.holders.map((e) => e.sequence)).toEqual([1, 2]);
    expect(listing.waiters.map((e) => e.sequence)).toEqual([3]);
    expect(listing).toMatchObject({ kind: 'lease', maxLeases: 2 });
  });

  it('without a limit none is reported as holding', () => {
    const listing = leaseListingOf('pool', leases, null, facts(leases.map((l) => l.node)))!;
    expect(listing.holders).toEqual([]);
    expect(listing.waiters).toHaveLength(3);
  });

  it.each<[string | undefined, number | null]>([
    [leaseDirectoryData(3).toString('utf8'), 3],
    ['{"kind":"nestjs-zk-lock/lease","maxLeases":1}', 1],
    ['{"kind":"nestjs-zk-lock/lease","maxLeases":0}', null],
    ['{"kind":"something-else","maxLeases":2}', null],
    ['3', null], // Kazoo's Semaphore: not a directory of our lease nodes
    ['many', null],
    ['', null],
    [undefined, null],
  ])('reads the directory data %j as %j leases', (text, expected) => {
    expect(maxLeasesOf(text === undefined ? undefined : Buffer.from(text))).toBe(expected);
  });
});
