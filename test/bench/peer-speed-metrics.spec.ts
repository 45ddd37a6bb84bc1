import { cyclesPerSecond, grantsPerSecond, handoffUs, overlappingHolds } from '../../bench/peers/speed/speed-metrics';
import type { CycleRecord } from '../../bench/peers/peer-worker.protocol';

/** A cycle from times in ms (the records carry ns as decimal strings). */
const cycle = (requested: number, granted: number, releasing: number, done = releasing + 0.1): CycleRecord => ({
  requestedAt: String(Math.round(requested * 1e6)),
  grantedAt: String(Math.round(granted * 1e6)),
  releasingAt: String(Math.round(releasing * 1e6)),
  doneAt: String(Math.round(done * 1e6)),
});

describe('peers pass: speed figures from the cycles the workers record', () => {
  it('cycles per second: the calls over the span from the first request to the last settle', () => {
    expect(cyclesPerSecond([cycle(0, 1, 2, 2), cycle(2, 3, 4, 4), cycle(4, 5, 6, 10)])).toBeCloseTo(300);
    expect(cyclesPerSecond([])).toBeNaN();
  });

  it('a handoff is the release to the grant of a waiter that asked during the hold', () => {
    const handoff = handoffUs(cycle(0, 1, 41), cycle(16, 43.5, 43.5));
    expect('us' in handoff && handoff.us).toBeCloseTo(2_500);
  });

  it('no handoff when the waiter was granted first, or asked before the grant or after the release; it says which', () => {
    expect(handoffUs(cycle(0, 20, 60), cycle(5, 6, 7))).toEqual({
      missed: 'the waiter was granted 14.0 ms before the holder',
    });
    expect(handoffUs(cycle(0, 20, 60), cycle(10, 61, 62))).toEqual({
      missed: "the waiter asked 10.0 ms before the holder's grant",
    });
    expect(handoffUs(cycle(0, 1, 41), cycle(41, 42, 43))).toEqual({
      missed: "the waiter asked 0.0 ms after the holder's release",
    });
  });

  it('grants per second count the grants inside the window only', () => {
    const a = [cycle(0, 5, 6), cycle(6, 999, 1000), cycle(1000, 1001, 1002)];
    const b = [cycle(0, 500, 501)];
    expect(grantsPerSecond([a, b], String(0), 1000)).toBeCloseTo(3);
  });

  it('flags holds of two clients that intersect, and only those', () => {
    const a = [cycle(0, 0, 10), cycle(20, 20, 30)];
    expect(overlappingHolds([a, [cycle(0, 10, 20)]])).toBe(0);
    expect(overlappingHolds([a, [cycle(0, 9, 12)]])).toBe(1);
    // a hold inside a long one, after a short one ended
    expect(overlappingHolds([[cycle(0, 0, 100)], [cycle(0, 1, 2), cycle(0, 50, 51)]])).toBe(2);
    // the same client's holds never count
    expect(overlappingHolds([[cycle(0, 0, 10), cycle(0, 5, 15)]])).toBe(0);
  });
});
