/** setTimeout's longest delay: Node cuts a longer one to 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Records every `setTimeout` armed past Node's range while it watches. Node would print a
 * TimeoutOverflowWarning for each and fire it after 1 ms; the warning itself cannot be
 * heard here (jest gives each test file a copy of `process` that Node's warnings never
 * reach; test/workers/long-timeout.worker.ts listens in a process of its own).
 */
export class OverlongTimers {
  private readonly spy = jest.spyOn(globalThis, 'setTimeout');

  /** Stops watching; the delays past the range that were asked for. */
  stop(): unknown[] {
    const delays = this.spy.mock.calls
      .map((call) => call[1])
      .filter((ms) => typeof ms === 'number' && ms > MAX_TIMER_MS);
    this.spy.mockRestore();
    return delays;
  }
}
