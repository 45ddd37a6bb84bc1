import type { LockMode } from '../port/lock-backend.js';
import { blockerAt } from '../port/lock-queue.js';
import { InMemoryQueue, LeaseRule, lockRule, type LockEntry, type QueueEntry } from './in-memory-queue.js';

const entry = (mode: LockMode) => ({
  name: 'q',
  mode,
  format: 'kazoo' as const,
  identity: 'test',
  onGrant: () => undefined,
});
const lease = { name: 's', identity: 'test', onGrant: () => undefined };
const holding = (queue: InMemoryQueue<QueueEntry>): boolean[] => queue.line().map((e) => e.holding);

/** Every sequence of modes up to `length`. */
function* modeSequences(length: number): Generator<LockMode[]> {
  if (length === 0) return yield [];
  for (const rest of modeSequences(length - 1)) for (const mode of ['read', 'write'] as const) yield [...rest, mode];
}

describe('InMemoryQueue with the lock rule', () => {
  it('names entries like sequential znodes in Kazoo format, numbered in queue order', () => {
    const queue = new InMemoryQueue(lockRule);
    const [w, r] = [queue.append(entry('write')), queue.append(entry('read'))];
    expect(w.node).toMatch(/^[0-9a-f]{32}__lock__0000000000$/);
    expect(r.node).toMatch(/^[0-9a-f]{32}__rlock__0000000001$/);
    expect([w.sequence, r.sequence]).toEqual([0, 1]);
  });

  it('grants exactly the entries the ZooKeeper rule (blockerAt) lets hold, for every queue of up to 7', () => {
    for (let length = 1; length <= 7; length++) {
      for (const modes of modeSequences(length)) {
        const queue = new InMemoryQueue(lockRule);
        const entries = modes.map((mode) => queue.append(entry(mode)));
        const expected = entries.filter((_, i) => blockerAt(entries, i) === null);
        expect(queue.admit()).toEqual(expected);
        expect(holding(queue)).toEqual(entries.map((e) => expected.includes(e)));
        expect(queue.admit()).toEqual([]); // each entry is granted once
      }
    }
  });

  it('after a removal grants only the entries that newly hold', () => {
    for (const modes of modeSequences(6)) {
      for (let gone = 0; gone < modes.length; gone++) {
        const queue = new InMemoryQueue(lockRule);
        const entries = modes.map((mode) => queue.append(entry(mode)));
        const before = new Set(queue.admit());
        queue.remove(entries[gone]);
        const rest: LockEntry[] = entries.filter((_, i) => i !== gone);
        const expected = rest.filter((e, i) => blockerAt(rest, i) === null && !before.has(e));
        expect(queue.admit()).toEqual(expected);
      }
    }
  });

  it('removes an entry once', () => {
    const queue = new InMemoryQueue(lockRule);
    const first = queue.append(entry('write'));
    expect(queue.remove(first)).toBe(true);
    expect(queue.remove(first)).toBe(false);
    expect(queue.isEmpty).toBe(true);
  });
});

describe('InMemoryQueue with the lease rule', () => {
  it('names entries like lease nodes, numbered in queue order', () => {
    const queue = new InMemoryQueue(new LeaseRule(2));
    const [a, b] = [queue.append(lease), queue.append(lease)];
    expect(a.node).toMatch(/^[0-9a-f]{32}__lease__0000000000$/);
    expect(b.node).toMatch(/^[0-9a-f]{32}__lease__0000000001$/);
  });

  it.each([1, 2, 3])('lets the %i lowest entries hold, in queue order, and the next in as one leaves', (maxLeases) => {
    const queue = new InMemoryQueue(new LeaseRule(maxLeases));
    const entries = Array.from({ length: maxLeases + 2 }, () => queue.append(lease));
    expect(queue.admit()).toEqual(entries.slice(0, maxLeases));
    expect(holding(queue)).toEqual(entries.map((_, i) => i < maxLeases));
    queue.remove(entries[maxLeases + 1]); // a waiter leaving lets nobody in
    expect(queue.admit()).toEqual([]);
    queue.remove(entries[0]);
    expect(queue.admit()).toEqual([entries[maxLeases]]);
  });
});
