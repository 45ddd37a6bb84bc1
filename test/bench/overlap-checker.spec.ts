import { checkTrial, summarise, type TrialCheck } from '../../bench/peers/faults/overlap-checker';
import type { HoldEvent } from '../../bench/peers/peer-worker.protocol';
import { trialCheck } from '../support/trial-check';

/** A time `ms` after an arbitrary origin, as the workers send it (hrtime ns, decimal string). */
const t = (ms: number): string => String(1_000_000_000_000n + BigInt(Math.round(ms * 1e6)));

const granted = (holder: string, ms: number): HoldEvent => ({ type: 'granted', holder, at: t(ms), token: '1' });
const told = (holder: string, ms: number): HoldEvent => ({ type: 'told-lost', holder, at: t(ms), how: 'signal' });
const stopped = (holder: string, ms: number): HoldEvent => ({ type: 'stopped', holder, at: t(ms) });
const releasing = (holder: string, ms: number): HoldEvent => ({ type: 'releasing', holder, at: t(ms) });
const done = (holder: string, ms: number): HoldEvent => ({ type: 'hold-done', holder, at: t(ms) });
const write = (
  holder: string,
  ms: number,
  row: 'fenced' | 'unfenced',
  outcome: 'landed' | 'refused' = 'landed',
): HoldEvent => ({ type: 'write', holder, at: t(ms), row, outcome });

/** B: granted at `from`, works until `to`, releases. */
const holderB = (from: number, to: number): HoldEvent[] => [
  granted('B', from),
  write('B', from + 1, 'fenced'),
  write('B', from + 2, 'unfenced'),
  releasing('B', to),
  done('B', to + 1),
];

const noStale = { fenced: { landed: 0, refused: 0 }, unfenced: { landed: 0 } };

describe('the fault trials checker (checkTrial)', () => {
  it('flags an overlap it is fed, and its length: B granted while A, never told, still worked', () => {
    const a = [granted('A', 0), write('A', 50, 'unfenced'), releasing('A', 5000), done('A', 5001)];
    const check = checkTrial(a, holderB(2000, 2300));
    expect(check.overlapped).toBe(true);
    expect(check.overlapMs).toBeCloseTo(300, 6); // B's whole hold, inside A's
    expect(check.toldFirst).toBe(false);
  });

  it('the overlap runs to the first of both ends: A told at 2500 after B was granted at 2000', () => {
    const a = [granted('A', 0), told('A', 2500), stopped('A', 2510), releasing('A', 2520), done('A', 2530)];
    const check = checkTrial(a, holderB(2000, 4000));
    expect(check).toMatchObject({ overlapped: true, toldFirst: false });
    expect(check.overlapMs).toBeCloseTo(500, 6);
  });

  it('none for back-to-back holds: B granted the instant A released, and no told-first question', () => {
    const a = [granted('A', 0), releasing('A', 1000), done('A', 1002)];
    expect(checkTrial(a, holderB(1000, 1200))).toEqual(trialCheck()); // both granted, nothing else
  });

  it('told first: A told, then B granted while A was still stopping; no overlap', () => {
    const a = [granted('A', 0), told('A', 1800), stopped('A', 1850), releasing('A', 2100), done('A', 2200)];
    const check = checkTrial(a, holderB(2000, 2300));
    expect(check).toMatchObject({ overlapped: false, overlapMs: 0, toldFirst: true });
  });

  it('told first also when A was told, released, and only then B was granted (its session expired later)', () => {
    const a = [granted('A', 0), told('A', 1600), stopped('A', 1610), releasing('A', 1620), done('A', 1630)];
    const check = checkTrial(a, holderB(2200, 2400));
    expect(check).toMatchObject({ overlapped: false, toldFirst: true });
  });

  it('not told first when told only after its work ended (a release that found the lock gone), B granted before', () => {
    const a = [granted('A', 0), releasing('A', 5000), told('A', 5010), done('A', 5011)];
    expect(checkTrial(a, holderB(2200, 7000)).toldFirst).toBe(false);
  });

  it('told at the very instant of B’s grant counts as told first', () => {
    const a = [granted('A', 0), told('A', 2000), releasing('A', 2100), done('A', 2200)];
    expect(checkTrial(a, holderB(2000, 2300)).toldFirst).toBe(true);
  });

  it('a hold with no end event lasts to its holder’s last event (a worker that died holding)', () => {
    const a = [granted('A', 0), write('A', 50, 'unfenced'), write('A', 1200, 'unfenced')];
    const check = checkTrial(a, [granted('B', 1000), write('B', 1400, 'unfenced')]);
    expect(check.overlapped).toBe(true);
    expect(check.overlapMs).toBeCloseTo(200, 6);
    const died = checkTrial(a.slice(0, 2), [granted('B', 1000), write('B', 1400, 'unfenced')]);
    expect(died).toMatchObject({ overlapped: false, overlapMs: 0 });
  });

  it('B never granted: no overlap, no told-first question, no stale write', () => {
    const a = [granted('A', 0), write('A', 50, 'unfenced'), releasing('A', 5000), done('A', 5001)];
    const b: HoldEvent[] = [done('B', 9000)];
    expect(checkTrial(a, b)).toEqual(trialCheck({ bGranted: false }));
  });

  it('B’s call failed without a grant (a dropped connection): flagged, apart from no overlap', () => {
    const a = [granted('A', 0), write('A', 50, 'unfenced'), releasing('A', 5000), done('A', 5001)];
    const b: HoldEvent[] = [{ type: 'hold-done', holder: 'B', at: t(218), error: 'Socket closed unexpectedly' }];
    expect(checkTrial(a, b)).toMatchObject({ bGranted: false, bFailed: true, overlapped: false, toldFirst: null });
    expect(checkTrial(a, holderB(5001, 5200)).bFailed).toBe(false);
  });

  it('counts stale writes only after B’s grant, by row: fenced refused apart from fenced landed', () => {
    const a = [
      granted('A', 0),
      write('A', 100, 'fenced'),
      write('A', 101, 'unfenced'),
      write('A', 2000, 'fenced'), // at B's grant: not after it
      write('A', 2000, 'unfenced'),
      write('A', 2050, 'fenced', 'refused'),
      write('A', 2051, 'unfenced'),
      write('A', 2100, 'fenced'),
      write('A', 2101, 'unfenced'),
      told('A', 2200),
      releasing('A', 2210),
      done('A', 2220),
    ];
    expect(checkTrial(a, holderB(2000, 2500)).staleWrites).toEqual({
      fenced: { landed: 1, refused: 1 },
      unfenced: { landed: 2 },
    });
  });

  it('a pause A woke from to the news (told, no write): its hold ends where it was stopped', () => {
    const a = [granted('A', 0), write('A', 150, 'unfenced'), told('A', 3202), stopped('A', 3203), done('A', 3300)];
    const check = checkTrial(a, holderB(2400, 2700), { aPaused: { from: t(200), to: t(3200) } });
    expect(check).toMatchObject({ overlapped: false, overlapMs: 0, toldFirst: false, staleWrites: noStale });
  });

  it('a pause A woke from still writing: it held through the pause, the overlap counts from B’s grant', () => {
    const a = [granted('A', 0), write('A', 3201, 'unfenced'), told('A', 3210), done('A', 3300)];
    const check = checkTrial(a, holderB(2400, 4000), { aPaused: { from: t(200), to: t(3200) } });
    expect(check.overlapped).toBe(true);
    expect(check.overlapMs).toBeCloseTo(810, 6);
    expect(check.staleWrites.unfenced.landed).toBe(1);
  });

  it('a pause after A’s hold ended changes nothing', () => {
    const a = [granted('A', 0), releasing('A', 100), done('A', 110), told('A', 3202)];
    const check = checkTrial(a, holderB(2400, 2700), { aPaused: { from: t(200), to: t(3200) } });
    expect(check).toMatchObject({ overlapped: false, toldFirst: null });
  });
});

describe('the fault trials summary (summarise)', () => {
  it('counts overlapped trials, their median and longest overlap, told first of those taken over, stale writes', () => {
    const check = (overlapMs: number, toldFirst: boolean | null, fenced: number, unfenced: number): TrialCheck =>
      trialCheck({
        bGranted: toldFirst !== null,
        bFailed: toldFirst === null,
        overlapped: overlapMs > 0,
        overlapMs,
        toldFirst,
        staleWrites: { fenced: { landed: fenced, refused: 2 }, unfenced: { landed: unfenced } },
      });
    expect(
      summarise([check(0, null, 0, 0), check(100, false, 1, 3), check(300, false, 0, 2), check(0, true, 0, 0)]),
    ).toEqual({
      trials: 4,
      aGranted: 4,
      bFailed: 1,
      overlapped: 2,
      overlapMedianMs: 200,
      overlapMaxMs: 300,
      toldFirst: 1,
      takenOver: 3,
      staleWrites: { fenced: { landed: 1, refused: 8 }, unfenced: { landed: 5 } },
      trialsWithStaleLanded: { fenced: 1, unfenced: 2 },
    });
  });

  it('no overlap: null median and longest', () => {
    expect(summarise([])).toMatchObject({ trials: 0, overlapped: 0, overlapMedianMs: null, overlapMaxMs: null });
  });
});
