import { idParts, parseChaosLog } from '../support/chaos-log';
import { checkCounter, checkExclusion, checkTokens, peakHolders } from '../support/chaos-invariants';

/** The chaos test's checks on hand-written logs: they must fire on what they guard against, and only on that. */
describe('chaos log and invariants', () => {
  const log = (...lines: string[]) => parseChaosLog(lines.join('\n'));

  it('reads process, loop, group and resource from an id', () => {
    expect(idParts('w1.0.17')).toEqual({ process: 'w1.0', loop: 'w1/lock', group: 'w1.0.17', resource: 'counter' });
    expect(idParts('w2.3.multi-7@m3')).toEqual({
      process: 'w2.3',
      loop: 'w2/multi',
      group: 'w2.3.multi-7',
      resource: 'm3',
    });
    expect(idParts('w3.1.lease2-9@pool')).toEqual({
      process: 'w3.1',
      loop: 'w3/lease2',
      group: 'w3.1.lease2-9',
      resource: 'pool',
    });
  });

  describe('a semaphore of 2', () => {
    const three = [
      'enter w1.0.lease1-0@pool - 10 - -',
      'enter w2.0.lease1-0@pool - 20 - -',
      'enter w3.0.lease1-0@pool - 30 - -',
    ];
    const ends = ['done w1.0.lease1-0@pool - 40', 'done w2.0.lease1-0@pool - 50', 'done w3.0.lease1-0@pool - 60'];

    it('flags a third holder while two trusted ones are inside', () => {
      const violations = checkExclusion(log(...three, ...ends), 'pool', 2);
      expect(violations.map((v) => v.what)).toEqual([
        'w3.0.lease1-0@pool entered while w1.0.lease1-0@pool, w2.0.lease1-0@pool were inside pool with a trusted grant (at most 2 at once)',
      ]);
      expect(peakHolders(log(...three, ...ends), 'pool')).toEqual({ peak: 3, times: 1 });
    });

    it('lets a third in once a holder knows its lease is lost, and never lets that holder write', () => {
      const lost = log(
        ...three.slice(0, 2),
        'aborted w1.0.lease1-0 - 25 lost',
        three[2],
        'abandon w1.0.lease1-0@pool - 40',
        ...ends.slice(1),
      );
      expect(checkExclusion(lost, 'pool', 2)).toEqual([]);
      expect(peakHolders(lost, 'pool')).toEqual({ peak: 2, times: 2 });
      const wrote = log(
        ...three.slice(0, 2),
        'aborted w1.0.lease1-0 - 25 lost',
        'done w1.0.lease1-0@pool - 40',
        ...ends.slice(1, 2),
      );
      expect(checkExclusion(wrote, 'pool', 2).map((v) => v.what)).toEqual([
        "w1.0.lease1-0@pool wrote after its grant's signal aborted",
      ]);
    });

    it('ends the sections of a killed process when its exit was seen, and flags one that never ends', () => {
      const killed = log(three[0], three[1], 'killed w1.0 - 25', three[2], ...ends.slice(1));
      expect(checkExclusion(killed, 'pool', 2)).toEqual([]);
      expect(checkExclusion(log(three[0]), 'pool', 2).map((v) => v.what)).toEqual([
        'w1.0.lease1-0@pool never ended (and its process was not killed)',
      ]);
    });
  });

  describe('multi-locks, lock by lock', () => {
    const first = ['enter w1.0.multi-0@m1 5 10 0 - list=m2,m1', 'enter w1.0.multi-0@m2 7 10 0 - list=m2,m1'];
    const second = [
      'enter w2.0.multi-0@m2 8 30 1 w1.0.multi-0@m2 list=m2,m3',
      'enter w2.0.multi-0@m3 3 30 0 - list=m2,m3',
    ];

    it('flags two holders of one lock, on that lock only', () => {
      const overlap = log(
        ...first,
        'done w1.0.multi-0@m1 5 20 1',
        ...second,
        'done w1.0.multi-0@m2 7 40 1',
        'done w2.0.multi-0@m2 8 50 2',
        'done w2.0.multi-0@m3 3 50 1',
      );
      expect(checkExclusion(overlap, 'm1')).toEqual([]);
      expect(checkExclusion(overlap, 'm2').map((v) => v.what)).toEqual([
        'w2.0.multi-0@m2 entered while w1.0.multi-0@m2 was inside m2 with a trusted grant (at most 1 at once)',
      ]);
    });

    it('applies a group line (aborted, exit) to each lock of the group', () => {
      const ends = [
        'abandon w1.0.multi-0@m1 5 40',
        'abandon w1.0.multi-0@m2 7 40',
        'exit w1.0.multi-0 - 41',
        'done w2.0.multi-0@m2 8 50 2',
      ];
      const lost = log(...first, 'aborted w1.0.multi-0 - 25 lost', ...second, ...ends);
      expect(checkExclusion(lost, 'm2')).toEqual([]);
      expect(lost.sections.filter((s) => s.group === 'w1.0.multi-0').map((s) => [s.aborted, s.lines.at(-1)])).toEqual([
        [25n, 'exit w1.0.multi-0 - 41'],
        [25n, 'exit w1.0.multi-0 - 41'],
      ]);
    });

    it('counts the writes and checks the tokens of each lock apart', () => {
      const run = log(
        ...first,
        'done w1.0.multi-0@m1 5 20 1',
        'done w1.0.multi-0@m2 7 20 1',
        ...second,
        'done w2.0.multi-0@m2 8 50 2',
        'done w2.0.multi-0@m3 3 50 1',
      );
      expect(checkCounter(run, 'm2', '2 w2.0.multi-0@m2')).toEqual([]);
      expect(checkCounter(run, 'm1', '0 -').map((v) => v.what)).toEqual([
        'the write of w1.0.multi-0@m1 was lost (overwritten before anyone read it)',
        'counter of m1 is 0, but 1 sections are done and 0 killed ones wrote',
      ]);
      expect(checkTokens(run, 'm2')).toEqual([]);
      const stale = log(
        ...first,
        'done w1.0.multi-0@m2 7 20 1',
        'enter w2.0.multi-0@m2 6 30 1 w1.0.multi-0@m2',
        'done w2.0.multi-0@m2 6 50 2',
      );
      expect(checkTokens(stale, 'm2').map((v) => v.what)).toEqual([
        'w2.0.multi-0@m2 entered after w1.0.multi-0@m2 with token 6 <= 7',
      ]);
    });
  });
});
