import { SessionLiveness, type LivenessHooks } from './session-liveness.js';

const T = 6000; // session timeout: margin 1200, read timeout 4000, tick 1000

function setup(): { liveness: SessionLiveness; calls: string[]; hooks: LivenessHooks & { pending?: number } } {
  const calls: string[] = [];
  const hooks: LivenessHooks & { pending?: number } = {
    heartbeat: () => calls.push(`heartbeat@${Date.now()}`),
    oldestPending: () => hooks.pending,
    dropConnection: (sentBefore) => calls.push(`drop@${Date.now()} before ${sentBefore}`),
    atRisk: (silent) => calls.push(`at-risk@${Date.now()} silent ${silent}`),
    recovered: () => calls.push(`recovered@${Date.now()}`),
    gone: (silent) => calls.push(`gone@${Date.now()} silent ${silent}`),
  };
  const liveness = new SessionLiveness(() => T, hooks, Date.now(), () => Date.now());
  return { liveness, calls, hooks };
}

describe('SessionLiveness', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('stops trusting at S + timeout - margin and gives up at S + timeout when nothing answers', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    expect(calls).toEqual(['heartbeat@0']);
    jest.advanceTimersByTime(4799);
    expect(calls.filter((c) => c.startsWith('at-risk'))).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toContain('at-risk@4800 silent 4800');
    jest.advanceTimersByTime(1199);
    expect(calls.some((c) => c.startsWith('gone'))).toBe(false);
    jest.advanceTimersByTime(1);
    expect(calls).toContain('gone@6000 silent 6000');
    liveness.stop();
  });

  it('keeps trusting while answers keep coming, with heartbeats only when idle', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    for (let t = 0; t < 30_000; t += 1000) {
      jest.advanceTimersByTime(1000);
      const last = calls.at(-1)!;
      if (last.startsWith('heartbeat')) liveness.acked(Number(last.split('@')[1])); // answered at once
    }
    expect(calls.every((c) => c.startsWith('heartbeat'))).toBe(true);
    expect(calls.length).toBeGreaterThan(10);
    liveness.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends no heartbeat while a request is pending, and drops a connection silent past the read timeout', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0);
    liveness.acked(0);
    hooks.pending = 500; // a request sent at 500, never answered
    jest.advanceTimersByTime(4000);
    expect(calls).toEqual(['heartbeat@0']);
    jest.advanceTimersByTime(1000); // 5000 - 500 > 4000
    expect(calls.filter((c) => !c.startsWith('at-risk'))).toEqual(['heartbeat@0', 'drop@5000 before 1000']);
    jest.advanceTimersByTime(2000);
    expect(calls.filter((c) => c.startsWith('drop'))).toHaveLength(1); // disconnected now: no more drops
    liveness.stop();
  });

  it('recovers only on an answer to a request sent recently enough', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    jest.advanceTimersByTime(5000); // at risk since 4800
    liveness.acked(100); // an old request: its answer does not push the risk past now
    expect(calls.some((c) => c.startsWith('recovered'))).toBe(false);
    liveness.acked(4900); // sent at 4900: safe until 4900 + 4800
    expect(calls).toContain('recovered@5000');
    jest.advanceTimersByTime(4699);
    expect(calls.filter((c) => c.startsWith('at-risk'))).toHaveLength(1);
    expect(calls.some((c) => c.startsWith('gone'))).toBe(false);
    liveness.stop();
  });

  it('counts a connect as an answer to the attempt that made it, however late it came', () => {
    const { liveness, calls } = setup();
    jest.advanceTimersByTime(9000); // a first connect slower than the whole timeout
    liveness.onConnected(8500); // the attempt that succeeded started at 8500
    jest.advanceTimersByTime(4299);
    expect(calls.filter((c) => c.startsWith('at-risk') || c.startsWith('gone'))).toEqual([]);
    jest.advanceTimersByTime(1); // 8500 + 4800
    expect(calls).toContain('at-risk@13300 silent 4800');
    liveness.stop();
  });

  it('stop() leaves no timer behind', () => {
    const { liveness } = setup();
    liveness.onConnected(0);
    expect(jest.getTimerCount()).toBe(2);
    liveness.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
