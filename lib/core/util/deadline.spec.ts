import { deadline } from './deadline.js';

describe('deadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts with the given reason after ms, not before', () => {
    const reason = new Error('timed out');
    const { signal } = deadline(1000, () => reason);
    jest.advanceTimersByTime(999);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
  });

  it('builds the reason only when it fires', () => {
    const reason = jest.fn(() => 'late');
    const { signal } = deadline(50, reason);
    jest.advanceTimersByTime(49);
    expect(reason).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(reason).toHaveBeenCalledTimes(1);
    expect(signal.reason).toBe('late');
  });

  it('dispatches one abort event', () => {
    const { signal } = deadline(10, () => 'x');
    const onAbort = jest.fn();
    signal.addEventListener('abort', onAbort);
    jest.advanceTimersByTime(1000);
    expect(onAbort).toHaveBeenCalledTimes(1);
  });

  it('fires for 0 ms on the next timer turn, not synchronously', () => {
    const { signal } = deadline(0, () => 'now');
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(0);
    expect(signal.reason).toBe('now');
  });

  it('clear() prevents the abort and cancels the timer', () => {
    const reason = jest.fn(() => 'x');
    const d = deadline(1000, reason);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(500);
    d.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(d.signal.aborted).toBe(false);
    expect(reason).not.toHaveBeenCalled();
  });

  it('clear() after firing changes nothing', () => {
    const d = deadline(1, () => 'fired');
    jest.advanceTimersByTime(1);
    d.clear();
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe('fired');
  });

  it('fires at exactly 2^31 - 1 ms, the longest delay setTimeout honours', () => {
    const { signal } = deadline(2 ** 31 - 1, () => 'max');
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(2 ** 31 - 2);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.reason).toBe('max');
  });

  it.each([
    ['2^31', 2 ** 31],
    ['a year', 365 * 24 * 3600 * 1000],
  ])('fires after %s exactly, past the range of one setTimeout', (_label, ms) => {
    const reason = jest.fn(() => 'late');
    const d = deadline(ms, reason);
    jest.advanceTimersByTime(ms - 1);
    expect(d.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(d.signal.reason).toBe('late');
    expect(jest.getTimerCount()).toBe(0);
  });

  it.each([
    ['Infinity', Infinity],
    ['NaN', NaN],
  ])('never fires for %s (and sets no timer)', (_label, ms) => {
    const reason = jest.fn(() => 'x');
    const d = deadline(ms, reason);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(2 ** 31 + 1000);
    expect(d.signal.aborted).toBe(false);
    expect(reason).not.toHaveBeenCalled();
    expect(() => d.clear()).not.toThrow();
  });

  it('gives each deadline its own signal', () => {
    const a = deadline(10, () => 'a');
    const b = deadline(20, () => 'b');
    expect(a.signal).not.toBe(b.signal);
    jest.advanceTimersByTime(10);
    expect(a.signal.reason).toBe('a');
    expect(b.signal.aborted).toBe(false);
  });
});
