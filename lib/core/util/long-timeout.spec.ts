import { longTimeout, MAX_TIMER_MS } from './long-timeout.js';

const DAY = 24 * 3600 * 1000;

describe('longTimeout', () => {
  describe('on fake timers (performance.now() follows them)', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it.each([
      ['1 ms', 1],
      ['2^31 - 1 ms, one plain timer', MAX_TIMER_MS],
      ['2^31 ms', 2 ** 31],
      ['28 days', 28 * DAY],
      ['a year', 365 * DAY],
      ['three chunks and a bit', 3 * MAX_TIMER_MS + 5],
    ])('fires once after %s, not a millisecond before', (_label, ms) => {
      const fn = jest.fn();
      longTimeout(fn, ms);
      jest.advanceTimersByTime(ms - 1);
      expect(fn).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(fn).toHaveBeenCalledTimes(1);
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(10 * MAX_TIMER_MS);
      expect(fn).toHaveBeenCalledTimes(1);
    });

    it('keeps one timer at a time while it waits in chunks', () => {
      longTimeout(() => undefined, 365 * DAY);
      for (let i = 0; i < 14; i++) {
        expect(jest.getTimerCount()).toBe(1);
        jest.advanceTimersByTime(MAX_TIMER_MS);
      }
      expect(jest.getTimerCount()).toBe(1);
      jest.advanceTimersByTime(365 * DAY);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('clear() cancels it in any chunk and leaves no timer', () => {
      const fn = jest.fn();
      const timer = longTimeout(fn, 60 * DAY);
      jest.advanceTimersByTime(MAX_TIMER_MS + 10); // in the second chunk
      timer.clear();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(120 * DAY);
      expect(fn).not.toHaveBeenCalled();
      expect(() => timer.clear()).not.toThrow();
    });

    it.each([
      ['unref: true unrefs', true],
      ['the default keeps', false],
    ])('%s every timer it arms, the chunks after the first too', (_label, unref) => {
      const armed = jest.spyOn(globalThis, 'setTimeout');
      const fn = jest.fn();
      longTimeout(fn, 3 * MAX_TIMER_MS, { unref });
      jest.advanceTimersByTime(3 * MAX_TIMER_MS);
      expect(fn).toHaveBeenCalledTimes(1);
      const timers = armed.mock.results.map((result) => result.value as NodeJS.Timeout);
      armed.mockRestore();
      expect(timers).toHaveLength(3);
      expect(timers.map((timer) => timer.hasRef())).toEqual([!unref, !unref, !unref]);
    });

    it.each([
      ['Infinity', Infinity],
      ['NaN', NaN],
    ])('never fires for %s, and sets no timer', (_label, ms) => {
      const fn = jest.fn();
      const timer = longTimeout(fn, ms);
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(10 * MAX_TIMER_MS);
      expect(fn).not.toHaveBeenCalled();
      expect(() => timer.clear()).not.toThrow();
    });

    it('fires for 0 ms on the next timer turn, not synchronously', () => {
      const fn = jest.fn();
      longTimeout(fn, 0);
      expect(fn).not.toHaveBeenCalled();
      jest.advanceTimersByTime(0);
      expect(fn).toHaveBeenCalledTimes(1);
    });
  });

  describe('on real timers', () => {
    it('unref: true leaves no timer that keeps the process alive; the default keeps one', () => {
      const handles = (): number =>
        (process as unknown as { getActiveResourcesInfo(): string[] })
          .getActiveResourcesInfo()
          .filter((r) => r === 'Timeout').length;
      const before = handles();
      const kept = longTimeout(() => undefined, 2 ** 31);
      expect(handles()).toBe(before + 1);
      const unrefd = longTimeout(() => undefined, 2 ** 31, { unref: true });
      expect(handles()).toBe(before + 1);
      kept.clear();
      unrefd.clear();
      expect(handles()).toBe(before);
    });
  });
});
