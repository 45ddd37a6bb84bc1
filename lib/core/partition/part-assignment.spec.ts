import { assignParts } from './part-assignment.js';

// The assignment rule alone: balance, stickiness and agreement, over many random states
// (a seeded generator, so a failure repeats).

const partsOf = (n: number): string[] => Array.from({ length: n }, (_, i) => String(i));
const idsOf = (m: number, from = 0): string[] => Array.from({ length: m }, (_, i) => `m${from + i}`);

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The owners a finished assignment leaves. */
function ownersOf(assigned: Map<string, string[]>): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [id, parts] of assigned) for (const part of parts) owners.set(part, id);
  return owners;
}

/** A balanced, settled state of `m` members over `n` parts. */
function settled(n: number, members: string[]): Map<string, string> {
  return ownersOf(assignParts({ parts: partsOf(n), members, owners: new Map() }));
}

function moved(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([part, owner]) => before.get(part) !== owner).map(([part]) => part);
}

function expectBalanced(assigned: Map<string, string[]>, n: number): void {
  const counts = [...assigned.values()].map((list) => list.length);
  expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
  const all = [...assigned.values()].flat();
  expect(new Set(all).size).toBe(n);
  expect(all).toHaveLength(n);
}

describe('assignParts', () => {
  it('gives every part to exactly one member, counts within 1, whatever the owners before', () => {
    const next = random(1);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(next() * 70);
      const members = idsOf(1 + Math.floor(next() * 8));
      const owners = new Map<string, string>();
      for (const part of partsOf(n)) {
        const pick = Math.floor(next() * (members.length + 2));
        if (pick < members.length) owners.set(part, members[pick]);
        else if (pick === members.length) owners.set(part, 'gone');
      }
      expectBalanced(assignParts({ parts: partsOf(n), members, owners }), n);
    }
  });

  it('is the same whatever order the members are listed in', () => {
    const owners = new Map([
      ['0', 'b'],
      ['1', 'b'],
      ['2', 'b'],
      ['5', 'a'],
    ]);
    const one = assignParts({ parts: partsOf(9), members: ['a', 'b', 'c'], owners });
    const other = assignParts({ parts: partsOf(9), members: ['c', 'a', 'b', 'a'], owners });
    expect([...other].sort()).toEqual([...one].sort());
  });

  it('gives every member an entry, and nothing to anyone without members', () => {
    expect(assignParts({ parts: partsOf(2), members: ['a', 'b', 'c'], owners: new Map() }).get('c')).toBeDefined();
    expect(assignParts({ parts: partsOf(2), members: [], owners: new Map([['0', 'x']]) }).size).toBe(0);
  });

  it('keeps a balanced state as it is', () => {
    for (const [n, m] of [
      [64, 5],
      [7, 3],
      [3, 5],
      [1, 1],
    ]) {
      const owners = settled(n, idsOf(m));
      expect(moved(owners, ownersOf(assignParts({ parts: partsOf(n), members: idsOf(m), owners })))).toEqual([]);
    }
  });

  it('on a join moves only what the newcomer takes, at most ⌈parts/members⌉', () => {
    for (let n = 1; n <= 70; n += 3) {
      for (let m = 1; m <= 7; m++) {
        const before = settled(n, idsOf(m));
        const members = [...idsOf(m), 'new'];
        const after = ownersOf(assignParts({ parts: partsOf(n), members, owners: before }));
        const moves = moved(before, after);
        expect(moves.every((part) => after.get(part) === 'new')).toBe(true);
        expect(moves.length).toBeLessThanOrEqual(Math.ceil(n / (m + 1)));
        expect(moves.length).toBe([...after.values()].filter((id) => id === 'new').length);
      }
    }
  });

  it("on a leave or crash moves only the leaver's parts", () => {
    for (let n = 1; n <= 70; n += 3) {
      for (let m = 2; m <= 7; m++) {
        const before = settled(n, idsOf(m));
        for (const leaver of idsOf(m)) {
          const members = idsOf(m).filter((id) => id !== leaver);
          const after = ownersOf(assignParts({ parts: partsOf(n), members, owners: before }));
          expect(moved(before, after).every((part) => before.get(part) === leaver)).toBe(true);
        }
      }
    }
  });

  it('agrees with itself while a move is under way: a member part-way there is asked to give up nothing more', () => {
    const next = random(7);
    for (let trial = 0; trial < 400; trial++) {
      const n = 1 + Math.floor(next() * 70);
      const m = 1 + Math.floor(next() * 6);
      const before = settled(n, idsOf(m));
      const join = next() < 0.5;
      const members = join ? [...idsOf(m), 'new'] : idsOf(m).filter((_, i) => i !== Math.floor(next() * m));
      if (members.length === 0) continue;
      const plan = ownersOf(assignParts({ parts: partsOf(n), members, owners: before }));
      // Some of the moves happen: each given up (free now), and maybe taken.
      const midway = new Map(before);
      for (const part of moved(before, plan)) {
        if (next() < 0.5) continue;
        midway.delete(part);
        if (next() < 0.5) midway.set(part, plan.get(part)!);
      }
      const replan = ownersOf(assignParts({ parts: partsOf(n), members, owners: midway }));
      for (const [part, owner] of midway)
        if (members.includes(owner)) expect([part, replan.get(part)]).toEqual([part, plan.get(part)]);
      expect(moved(before, replan).length).toBe(moved(before, plan).length);
    }
  });
});
