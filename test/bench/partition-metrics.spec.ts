import { changeMetrics, type OwnershipEvent } from '../../bench/partitions/partition-metrics';

const ms = (n: number): bigint => BigInt(n) * 1_000_000n;
const at = (t: number, member: string, owned: number[]): OwnershipEvent => ({ hr: ms(t), member, owned });

describe('the partition pass metrics (changeMetrics)', () => {
  const before = new Map([
    ['a', [0, 1]],
    ['b', [2, 3]],
  ]);

  it('a move: the gap runs from the old owner giving a part up to the new one taking it', () => {
    const events = [at(10, 'a', [0]), at(25, 'c', [1])];
    expect(changeMetrics(4, before, events, ms(0), ms(30))).toEqual({
      moved: 1,
      interrupted: 1,
      maxGapMs: 15,
      totalGapMs: 15,
      overlaps: 0,
    });
  });

  it('a release of every part (Kazoo on any change): every part interrupted, only reassigned ones moved', () => {
    const events = [at(10, 'a', []), at(12, 'b', []), at(40, 'b', [2, 3]), at(50, 'a', [0]), at(55, 'c', [1])];
    expect(changeMetrics(4, before, events, ms(0), ms(60))).toEqual({
      moved: 1,
      interrupted: 4,
      maxGapMs: 45,
      totalGapMs: 40 + 45 + 28 + 28,
      overlaps: 0,
    });
  });

  it('counts a part owned by two at once, and a gap still open at the end up to the end; events outside the window do not count', () => {
    const events = [at(5, 'c', [2]), at(10, 'a', [1]), at(99, 'c', [0])];
    expect(changeMetrics(4, before, events, ms(0), ms(20))).toEqual({
      moved: 2, // part 0 (no owner at the end) and part 2 (two)
      interrupted: 1,
      maxGapMs: 10,
      totalGapMs: 10,
      overlaps: 1,
    });
  });
});
