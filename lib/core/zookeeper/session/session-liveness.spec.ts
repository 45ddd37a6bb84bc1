import { SessionLiveness, type LivenessHooks } from './session-liveness.js';

// Session timeout 6000: margin 1200, pair gap 1800, heartbeat 400, write timeout 600,
// read timeout 4000, tick 200.
const T = 6000;

type Hooks = LivenessHooks & { pending?: number; pendingWrite?: number; idle?: boolean };

function setup(timeoutMs: number | (() => number) = T): {
  liveness: SessionLiveness;
  calls: string[];
  hooks: Hooks;
} {
  const calls: string[] = [];
  const hooks: Hooks = {
    heartbeat: () => calls.push(`heartbeat@${Date.now()}`),
    anchor: () => calls.push(`anchor@${Date.now()}`),
    busy: () => !hooks.idle,
    oldestPending: (writesOnly) => (writesOnly ? hooks.pendingWrite : (hooks.pending ?? hooks.pendingWrite)),
    dropConnection: (sentBefore) => calls.push(`drop@${Date.now()} before ${sentBefore}`),
    atRisk: (unproven) => calls.push(`at-risk@${Date.now()} unproven ${unproven}`),
    recovered: () => calls.push(`recovered@${Date.now()}`),
    proven: () => undefined,
    gone: (unproven) => calls.push(`gone@${Date.now()} unproven ${unproven}`),
  };
  const liveness = new SessionLiveness(
    typeof timeoutMs === 'number' ? () => timeoutMs : timeoutMs,
    hooks,
    Date.now(),
    () => Date.now(),
  );
  return { liveness, calls, hooks };
}

const only = (calls: string[], kind: string): string[] => calls.filter((c) => c.startsWith(kind));

/** A write sent now and answered `rttMs` later. */
function write(liveness: SessionLiveness, rttMs = 0): void {
  const sentAt = Date.now();
  liveness.writeSent(sentAt);
  jest.advanceTimersByTime(rttMs);
  liveness.answered(sentAt, true);
}

/** A read sent now and answered `rttMs` later. */
function read(liveness: SessionLiveness, rttMs = 0): void {
  const sentAt = Date.now();
  jest.advanceTimersByTime(rttMs);
  liveness.answered(sentAt, false);
}

/** Heartbeat writes, recorded in `calls` and each answered 5 ms after it goes out. */
function answerHeartbeats({ liveness, calls, hooks }: ReturnType<typeof setup>): void {
  hooks.heartbeat = () => {
    const at = Date.now();
    calls.push(`heartbeat@${at}`);
    liveness.writeSent(at);
    setTimeout(() => liveness.answered(at, true), 5);
  };
}

/**
 * A grant's wait (`want`, then its barrier sent now): a pair gap and two heartbeats later,
 * a heartbeat write sent a pair gap after the barrier has proved the session again.
 */
function provenAgain(liveness: SessionLiveness, done: () => void): void {
  jest.advanceTimersByTime(0.3 * T + 400);
  expect(liveness.stale).toBe(false);
  expect(liveness.check()).toBe(true);
  done();
}

/**
 * Timeout 1000 (margin 200, gap 300): a write sent and answered at 5 (an anchor, proving
 * nothing yet), and nothing since; it is now 801, at risk since 800.
 */
function atRiskWithAnchor(): { liveness: SessionLiveness; calls: string[] } {
  const { liveness, calls } = setup(1000);
  liveness.onConnected(0);
  jest.advanceTimersByTime(5);
  write(liveness);
  jest.advanceTimersByTime(796);
  return { liveness, calls };
}

describe('SessionLiveness', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('stops trusting at P + timeout - margin and gives up at P + timeout when nothing proves the session', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0); // the connect proves P = 0
    expect(calls).toEqual(['heartbeat@0']);
    jest.advanceTimersByTime(4799);
    expect(only(calls, 'at-risk')).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toContain('at-risk@4800 unproven 4800');
    jest.advanceTimersByTime(1199);
    expect(only(calls, 'gone')).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toContain('gone@6000 unproven 6000');
    liveness.stop();
  });

  it('answered reads prove nothing: a server cut off from the leader still answers them', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    for (let t = 0; t < 4800; t += 100) {
      jest.advanceTimersByTime(100);
      liveness.answered(Date.now() - 1, false);
    }
    expect(calls).toContain('at-risk@4800 unproven 4800');
    liveness.stop();
  });

  // The anchor may be any request the server answered (it touched the session on receipt).
  it.each([
    ['write', write],
    ['read', read],
  ] as const)(
    'one answered %s proves nothing; a write sent a pair gap after it was answered proves its send time',
    (_, anchor) => {
      const { liveness } = setup();
      liveness.onConnected(0);
      jest.advanceTimersByTime(100);
      anchor(liveness, 10); // sent 100, answered 110
      expect(liveness.atRiskAt).toBe(4800); // still the connect's proof
      jest.advanceTimersByTime(1799); // 1909: 1 ms short of 110 + 1800
      write(liveness);
      expect(liveness.atRiskAt).toBe(4800);
      jest.advanceTimersByTime(1);
      write(liveness); // sent 1910 >= 110 + 1800: the leader heard of the request sent at 100
      expect(liveness.atRiskAt).toBe(100 + 4800);
      liveness.stop();
    },
  );

  it('no pair proves anything while pairs are held (the server is not checked yet); writes answered meanwhile pair once released', () => {
    const { liveness } = setup();
    liveness.holdPairs(true);
    liveness.onConnected(0);
    jest.advanceTimersByTime(100);
    write(liveness, 10); // sent 100, answered 110
    jest.advanceTimersByTime(2000);
    write(liveness); // sent 2110: a pair gap after 110, but held
    expect(liveness.atRiskAt).toBe(4800); // still the connect's proof
    liveness.holdPairs(false);
    jest.advanceTimersByTime(10);
    write(liveness); // pairs with the write sent at 100, answered while held
    expect(liveness.atRiskAt).toBe(100 + 4800);
    liveness.stop();
  });

  it('keeps trusting while heartbeat writes are answered, and stays ahead of the deadline by the budget', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    let worstLead = Infinity;
    for (let t = 0; t < 60_000; t += 10) {
      jest.advanceTimersByTime(10);
      const last = calls.at(-1)!;
      if (last === `heartbeat@${Date.now()}`) {
        liveness.answered(Date.now(), true);
        liveness.writeSent(Date.now());
      }
      worstLead = Math.min(worstLead, liveness.atRiskAt - Date.now());
    }
    expect(only(calls, 'at-risk')).toEqual([]);
    expect(only(calls, 'heartbeat').length).toBeGreaterThan(60_000 / 600);
    // P lags by at most gap + 2 × (heartbeat + tick) = 3000, so the at-risk time stays 1800 ahead.
    expect(worstLead).toBeGreaterThanOrEqual(4800 - 3000);
    liveness.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('re-arms the deadline when a late proof brings trust back (the next risk comes at its new time)', () => {
    const { liveness, calls } = atRiskWithAnchor();
    expect(only(calls, 'at-risk')).toEqual(['at-risk@800 unproven 800']);
    liveness.writeSent(306);
    jest.advanceTimersByTime(3); // 804: the write sent at 306 is answered, proving 5
    liveness.answered(306, true);
    expect(calls).toContain('recovered@804');
    jest.advanceTimersByTime(1); // 805 = 5 + 1000 - 200
    expect(only(calls, 'at-risk')).toEqual(['at-risk@800 unproven 800', 'at-risk@805 unproven 800']);
    liveness.stop();
  });

  it('a proof that arrives after the risk began but proves a time whose risk began before it brings no trust back (no flapping)', () => {
    const { liveness, calls } = atRiskWithAnchor();
    liveness.writeSent(306);
    jest.advanceTimersByTime(49); // 850: the write sent at 306 is answered, proving 5, at risk from 805 on
    liveness.answered(306, true);
    expect(liveness.provenAt).toBe(5); // the proof counts (for when the session is gone)...
    jest.advanceTimersByTime(1);
    // ...but 805 is past: no `recovered`, no second `at-risk`.
    expect(calls.filter((c) => !c.startsWith('heartbeat'))).toEqual(['at-risk@800 unproven 800']);
    jest.advanceTimersByTime(154); // 1005 = 5 + 1000
    expect(only(calls, 'gone')).toEqual(['gone@1005 unproven 1000']);
  });

  it('a re-attach sends its write at once, so a reconnect just before the risk proves the session in time', () => {
    const { liveness, calls } = setup(); // at risk at P + 4800; ticks every 200 ms, heartbeats every 400
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(100);
    liveness.onDisconnected();
    jest.advanceTimersByTime(4600); // 4700: 100 ms before the risk
    calls.splice(0); // the first connection's heartbeat is never answered
    liveness.onConnected(4650); // re-attached by an attempt started at 4650
    // Each heartbeat write is answered 20 ms after it goes out, as a healthy server does.
    const sent: number[] = [];
    for (let t = 4700; t < 5200; t += 10) {
      for (const c of calls.splice(0)) {
        if (c.startsWith('heartbeat@')) {
          sent.push(Number(c.slice('heartbeat@'.length)));
          liveness.writeSent(sent.at(-1)!);
        } else if (!c.startsWith('heartbeat')) throw new Error(c);
      }
      while (sent.length > 0 && sent[0] + 20 <= Date.now()) liveness.answered(sent.shift()!, true);
      jest.advanceTimersByTime(10);
    }
    expect(liveness.provenAt).toBe(4650);
    liveness.stop();
  });

  it('check() tells at once when the deadline passed while the event loop was blocked (no timer ran)', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0);
    expect(liveness.check()).toBe(true);
    jest.setSystemTime(4800); // time passes, no timer fires
    expect(only(calls, 'at-risk')).toEqual([]);
    expect(liveness.check()).toBe(false);
    expect(calls).toContain('at-risk@4800 unproven 4800');
    jest.setSystemTime(6000);
    expect(liveness.check()).toBe(false);
    expect(calls).toContain('gone@6000 unproven 6000');
    expect(jest.getTimerCount()).toBe(0); // gone stops every timer
  });

  it('leaves a server that sits on a write past the write timeout once the proof is half a timeout old', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0);
    hooks.pendingWrite = 100; // sent at 100, never answered
    jest.advanceTimersByTime(2800); // the write is late, but the proof (0) is younger than 3000
    expect(only(calls, 'drop')).toEqual([]);
    jest.advanceTimersByTime(400); // 3200: past both
    expect(only(calls, 'drop')).toEqual(['drop@3200 before 3200']);
    jest.advanceTimersByTime(1000);
    expect(only(calls, 'drop')).toHaveLength(1); // disconnected now: no more drops
    liveness.stop();
  });

  it('keeps heartbeats going (pipelined) through slow commits, and trusts throughout', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0);
    // Every write takes 550 ms to commit: heartbeats (every 400 ms) overlap.
    const inFlight: number[] = [];
    let mostInFlight = 0;
    for (let t = 0; t < 20_000; t += 200) {
      jest.advanceTimersByTime(200);
      for (const c of calls.splice(0)) {
        if (c.startsWith('heartbeat')) inFlight.push(Number(c.split('@')[1]));
        else if (c.startsWith('drop') || c.startsWith('at-risk')) throw new Error(c);
      }
      while (inFlight.length > 0 && inFlight[0] + 550 <= Date.now()) liveness.answered(inFlight.shift()!, true);
      hooks.pendingWrite = inFlight[0];
      mostInFlight = Math.max(mostInFlight, inFlight.length);
      for (const sentAt of inFlight) liveness.writeSent(sentAt);
    }
    expect(liveness.atRiskAt - Date.now()).toBeGreaterThan(1000);
    expect(mostInFlight).toBeGreaterThan(1); // pipelined
    liveness.stop();
  });

  it('drops a connection silent past the read timeout', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0);
    hooks.pending = 500; // a read sent at 500, never answered
    jest.advanceTimersByTime(4400);
    expect(only(calls, 'drop')).toEqual([]);
    jest.advanceTimersByTime(200); // 4600 - 500 > 4000
    expect(only(calls, 'drop')).toEqual(['drop@4600 before 600']);
    liveness.stop();
  });

  it('times a request queued while disconnected from the connect that sends it: the new server has had it only since', () => {
    const { liveness, calls, hooks } = setup(); // write timeout 600, read timeout 4000
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(1000);
    liveness.onDisconnected();
    jest.advanceTimersByTime(500);
    hooks.pendingWrite = 1500; // made while disconnected: the client queues it until it connects
    jest.advanceTimersByTime(1600);
    liveness.onConnected(3000); // 3100: it goes out now, and the proof (0) is past half the timeout
    jest.advanceTimersByTime(600); // 3700: 2200 ms since it was made, 600 since it was sent
    expect(only(calls, 'drop')).toEqual([]);
    jest.advanceTimersByTime(100); // the tick at 3800: this server has sat on it past the write timeout
    expect(only(calls, 'drop')).toEqual(['drop@3800 before 3800']);
    liveness.stop();
  });

  it('a holder at risk whose lost lock is deleted while disconnected recovers on the re-attach, not leaving it for that delete', () => {
    const { liveness, calls, hooks } = setup(); // at risk at 4800, gone at 6000
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(2000);
    liveness.onDisconnected(); // a silent server, left
    jest.advanceTimersByTime(2800); // 4800: at risk; the holder, told its lock is lost, deletes its node
    hooks.pendingWrite = 4800; // queued: no connection yet
    jest.advanceTimersByTime(500);
    liveness.onConnected(5100); // 5300: re-attached; the delete and the proving heartbeat go out now
    expect(calls.at(-1)).toBe('heartbeat@5300');
    jest.advanceTimersByTime(400); // a loaded server: both answered 400 ms later, within the write timeout
    hooks.pendingWrite = undefined;
    liveness.answered(4800, true);
    liveness.answered(5300, true); // proves the attempt's start, 5100
    expect(calls.filter((c) => !c.startsWith('heartbeat'))).toEqual(['at-risk@4800 unproven 4800', 'recovered@5700']);
    expect(liveness.atRiskAt).toBe(5100 + 4800);
    liveness.stop();
  });

  it('writes answered on an earlier connection pair with none on a new one (they may have gone through another server)', () => {
    const { liveness } = setup();
    liveness.onConnected(0);
    jest.advanceTimersByTime(500);
    write(liveness); // anchor sent 500
    liveness.onDisconnected();
    jest.advanceTimersByTime(100);
    liveness.onConnected(300); // a re-attach whose attempt started at 300
    expect(liveness.atRiskAt).toBe(4800); // not yet: a write on it must be answered first
    write(liveness); // answered on the new connection: proves 300
    expect(liveness.atRiskAt).toBe(300 + 4800);
    jest.advanceTimersByTime(1700);
    write(liveness); // 2300 >= 500 + 1800, but that anchor is from the old connection (600's is too young)
    expect(liveness.atRiskAt).toBe(300 + 4800);
    liveness.stop();
  });

  it('a re-attach proves nothing while no write on it is answered (a leader cut off from the others answers re-attaches too)', () => {
    const { liveness, calls } = setup();
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(3000);
    liveness.onDisconnected();
    liveness.onConnected(3000); // re-attached; its heartbeat write is never answered
    jest.advanceTimersByTime(1800);
    expect(calls).toContain('at-risk@4800 unproven 4800');
    liveness.stop();
  });

  it('counts the connect that created the session as a proof from the attempt that made it, however late it came', () => {
    const { liveness, calls } = setup();
    jest.advanceTimersByTime(9000); // a first connect slower than the whole timeout
    liveness.onConnected(8500, true);
    jest.advanceTimersByTime(4299);
    expect(calls.filter((c) => c.startsWith('at-risk') || c.startsWith('gone'))).toEqual([]);
    jest.advanceTimersByTime(1); // 8500 + 4800
    expect(calls).toContain('at-risk@13300 unproven 4800');
    liveness.stop();
  });

  it('stop() leaves no timer behind', () => {
    const { liveness } = setup();
    liveness.onConnected(0);
    expect(jest.getTimerCount()).toBe(2);
    liveness.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('after an event loop blocked past the deadline, the first tick stops trusting before it drops a silent server', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0);
    jest.advanceTimersByTime(200);
    hooks.pending = Date.now(); // a read that will go unanswered
    // A blocked loop: the clock moves on, no timer runs meanwhile.
    jest.setSystemTime(Date.now() + 0.9 * T); // past the at-risk time, not yet gone
    jest.advanceTimersToNextTimer(); // the tick, due long ago, runs first
    expect(calls.filter((c) => !c.startsWith('heartbeat'))[0]).toMatch(/^at-risk@/);
    expect(only(calls, 'drop')).toHaveLength(1); // and then leaves the server that did not answer
    liveness.stop();
  });

  it('check() before the first connect finds nothing due: a slow first connect is not silence', () => {
    const { liveness, calls } = setup();
    jest.advanceTimersByTime(2 * T); // the connect has not been answered yet
    expect(liveness.check()).toBe(true);
    expect(calls).toEqual([]);
    liveness.onConnected(0, true); // a new session: proven from when the attempt started
    expect(liveness.check()).toBe(false); // from then on the clock counts
    liveness.stop();
  });

  it('keeps the pace of a timeout renegotiated on a reconnect (80 s, then 4 s): a session answered throughout stays trusted', () => {
    let timeoutMs = 80_000;
    const { liveness, calls, hooks } = setup(() => timeoutMs);
    // A healthy server: every heartbeat is committed 20 ms after it is sent.
    hooks.heartbeat = () => {
      const sentAt = Date.now();
      calls.push(`heartbeat@${sentAt}`);
      liveness.writeSent(sentAt);
      setTimeout(() => liveness.answered(sentAt, true), 20);
    };
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(10_000);
    liveness.onDisconnected();
    timeoutMs = 4000; // the next server grants 20 × its tickTime of 200 ms
    liveness.onConnected(10_000);
    jest.advanceTimersByTime(20_000);
    expect(calls.filter((c) => !c.startsWith('heartbeat'))).toEqual([]);
    expect(liveness.check()).toBe(true);
    // Heartbeats at the new pace (due every 267 ms, checked every 133 ms: every 400), not every 2667 ms.
    const after = only(calls, 'heartbeat').filter((c) => Number(c.split('@')[1]) > 10_000);
    expect(after.length).toBeGreaterThanOrEqual(20_000 / 400);
    liveness.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('after a reconnect that lengthens the timeout (4 s, then 80 s), the proof keeps the old one until a write on the new connection is answered', () => {
    let timeoutMs = 4000;
    const { liveness, calls } = setup(() => timeoutMs);
    liveness.onConnected(0, true); // proves 0 under 4 s: at risk from 3200
    jest.advanceTimersByTime(1000);
    liveness.onDisconnected();
    timeoutMs = 80_000;
    liveness.onConnected(1000); // the re-attach may not have reached the leader: it may still count 4 s from 0
    jest.advanceTimersByTime(2199);
    expect(only(calls, 'at-risk')).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(only(calls, 'at-risk')).toEqual(['at-risk@3200 unproven 3200']);
    jest.advanceTimersByTime(800);
    expect(only(calls, 'gone')).toEqual(['gone@4000 unproven 4000']);
  });

  it('after a reconnect that shortens the timeout (80 s, then 4 s), counts the new one from the re-attach until a write on it is answered', () => {
    let timeoutMs = 80_000;
    const { liveness, calls } = setup(() => timeoutMs);
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(10_000);
    liveness.onDisconnected();
    timeoutMs = 4000;
    liveness.onConnected(10_000); // its heartbeat is never answered
    jest.advanceTimersByTime(3199);
    expect(only(calls, 'at-risk')).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(only(calls, 'at-risk')).toEqual(['at-risk@13200 unproven 13200']);
    liveness.stop();
  });
});

describe('SessionLiveness while idle (nothing held, nothing awaited)', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  /** Idle from the connect on; each read is answered 5 ms after it goes out. */
  function idle(): ReturnType<typeof setup> {
    const parts = setup();
    parts.hooks.idle = true;
    parts.hooks.anchor = () => {
      const sentAt = Date.now();
      parts.calls.push(`anchor@${sentAt}`);
      setTimeout(() => parts.liveness.answered(sentAt, false), 5);
    };
    parts.liveness.onConnected(0, true);
    return parts;
  }

  it('writes nothing: a read every T/15 (at once on connecting), however long; no risk reported, nothing lost', () => {
    const { liveness, calls } = idle();
    jest.advanceTimersByTime(10 * T);
    expect(only(calls, 'heartbeat')).toEqual([]);
    const anchors = only(calls, 'anchor');
    expect(anchors[0]).toBe('anchor@0');
    expect(anchors.length).toBeGreaterThanOrEqual((10 * 15) / 2);
    expect(anchors.length).toBeLessThanOrEqual(10 * 15 + 1);
    expect(calls.filter((c) => !c.startsWith('anchor'))).toEqual([]); // no at-risk, no gone, no drop
    expect(liveness.check()).toBe(true); // nothing is watched while nothing is held
    expect(liveness.provenAt).toBe(0); // reads prove nothing
    liveness.stop();
    jest.advanceTimersByTime(5); // the last read's answer
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a long idle stretch keeps few anchors, and the first write still pairs with a read answered a pair gap before it', () => {
    const { liveness } = idle();
    jest.advanceTimersByTime(100 * T); // 1,500 reads answered
    const anchors = (liveness as unknown as { evidence: { anchors: unknown[] } }).evidence.anchors;
    expect(anchors.length).toBeLessThanOrEqual(48);
    write(liveness);
    // The latest read answered at least 1800 before (reads every 400, answered 5 ms later).
    expect(Date.now() - liveness.provenAt).toBeLessThanOrEqual(1800 + 400 + 5);
    liveness.stop();
  });

  it('a read never proves: after a write, a read a pair gap later proves nothing (a cut-off server answers reads alone)', () => {
    const { liveness } = setup();
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(100);
    write(liveness, 10); // sent 100, answered 110
    jest.advanceTimersByTime(2000);
    read(liveness);
    jest.advanceTimersByTime(2000);
    read(liveness);
    expect(liveness.provenAt).toBe(0);
    liveness.stop();
  });

  it('from idle to work: the first write pairs with the latest idle read, so the proof is fresh at once and no risk is told', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(5 * T); // 30000: the connect's proof is long stale
    const sentAt = Date.now(); // an acquire's create
    liveness.writeSent(sentAt);
    jest.advanceTimersByTime(5);
    liveness.answered(sentAt, true);
    // Within a pair gap, a heartbeat and the read's round trip of the create.
    expect(liveness.provenAt).toBeGreaterThanOrEqual(sentAt - 1800 - 400 - 5);
    hooks.idle = false; // granted: held from now on
    expect(liveness.check()).toBe(true);
    answerHeartbeats({ liveness, calls, hooks });
    jest.advanceTimersByTime(5 * T);
    expect(calls.filter((c) => !c.startsWith('anchor') && !c.startsWith('heartbeat'))).toEqual([]);
    expect(only(calls, 'heartbeat').length).toBeGreaterThanOrEqual((5 * 15) / 2); // writes while held
    expect(liveness.check()).toBe(true);
    liveness.stop();
  });

  it('a grant is stale while less trust is left than a heartbeat needs (a tick and the write timeout): it writes first', () => {
    const { liveness } = idle();
    jest.advanceTimersByTime(T);
    write(liveness); // 6000: pairs with the read sent at 4000; at risk from 4000 + 4800 = 8800
    expect(liveness.provenAt).toBe(4000);
    jest.advanceTimersByTime(1900); // 7900: 900 left, more than a tick (200) and the write timeout (600)
    expect(liveness.stale).toBe(false);
    jest.advanceTimersByTime(150); // 8050: 750 left, too little for a heartbeat to come back
    expect(liveness.stale).toBe(true);
    liveness.stop();
  });

  it('something held again while the proof is stale is not trusted: the clock is checked as it subscribes', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(2 * T);
    expect(liveness.check()).toBe(true); // idle: nothing watched
    hooks.idle = false; // a holder subscribes (no write proved the session since the connect)
    expect(liveness.check()).toBe(false);
    expect(only(calls, 'at-risk')).toEqual([`at-risk@${2 * T} unproven ${2 * T}`]);
    // Not given up for a proof that aged while idle: its heartbeats get a whole timeout.
    expect(only(calls, 'gone')).toEqual([]);
    jest.advanceTimersByTime(T - 1);
    expect(only(calls, 'gone')).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(only(calls, 'gone')).toEqual([`gone@${3 * T} unproven ${3 * T}`]);
  });

  it('work that starts on a fresh proof keeps its deadlines: given up at P + T when nothing proves the session again', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(T);
    write(liveness); // 6000: pairs with the read sent at 4000
    expect(liveness.provenAt).toBe(4000);
    hooks.idle = false; // granted: held from now on, and nothing answers any more
    hooks.anchor = () => undefined;
    expect(liveness.check()).toBe(true);
    jest.advanceTimersByTime(4000 + T - 6000); // 10000: P + T
    expect(only(calls, 'gone')).toEqual([`gone@${4000 + T} unproven ${T}`]);
  });

  it('work that starts on a session idle past its timeout recovers with its first heartbeat pair, in the same session', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(2 * T);
    hooks.idle = false; // work starts: at risk at once (nothing proven for 2 T)
    hooks.heartbeat = () => {
      const at = Date.now();
      liveness.writeSent(at);
      setTimeout(() => liveness.answered(at, true), 5);
    };
    expect(liveness.check()).toBe(false);
    jest.advanceTimersByTime(400); // the first heartbeat write pairs with a read answered a pair gap before
    expect(liveness.check()).toBe(true);
    expect(calls.filter((c) => !c.startsWith('anchor'))).toEqual([
      `at-risk@${2 * T} unproven ${2 * T}`,
      expect.stringMatching(/^recovered@/),
    ]);
    liveness.stop();
  });

  it('a grant that waits after a blocked event loop (`want`): heartbeat writes prove the session again, in the same session', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(2000); // reads answered every T/15, the last at 1605
    answerHeartbeats({ liveness, calls, hooks });
    jest.setSystemTime(2000 + 0.9 * T); // blocked for 0.9 T: no timer ran, no read was sent
    expect(liveness.stale).toBe(true);
    const done = liveness.want(); // the proof is 7400 old: at risk now, a whole timeout from now to prove it
    write(liveness); // the grant's barrier: it pairs only with a read from before the block
    expect(liveness.provenAt).toBe(1600); // moved, and still too old to trust
    provenAgain(liveness, done); // a pair gap later, a heartbeat pairs with the barrier
    expect(calls.filter((c) => !c.startsWith('anchor') && !c.startsWith('heartbeat'))).toEqual([
      `at-risk@7400 unproven 7400`,
      expect.stringMatching(/^recovered@/),
    ]);
    expect(only(calls, 'heartbeat').length).toBeGreaterThan(1); // writes, at the heartbeat's pace, while wanted
    liveness.stop();
  });

  it('a grant that waits with a proof too old to serve it but not yet at risk (`want`): its heartbeats get a whole timeout from now', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(200); // the read sent on connecting answered at 5
    answerHeartbeats({ liveness, calls, hooks });
    jest.setSystemTime(4400); // blocked: P = 0 is stale (from 4000), at risk only from 4800
    expect(liveness.stale).toBe(true);
    const done = liveness.want();
    write(liveness); // the grant's barrier: no read answered a pair gap before it but the one P already holds
    expect(liveness.provenAt).toBe(0);
    provenAgain(liveness, done); // P + T = 6000 passes; a heartbeat sent a pair gap after the barrier proves it
    expect(calls.filter((c) => !c.startsWith('anchor') && !c.startsWith('heartbeat'))).toEqual([
      `at-risk@4800 unproven 4800`,
      expect.stringMatching(/^recovered@/),
    ]);
    liveness.stop();
  });

  it('a grant whose barrier moves the proof short of the risk but still stale: the whole timeout from the want still runs', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(1000); // reads answered at 5, 405 and 805
    answerHeartbeats({ liveness, calls, hooks });
    jest.setSystemTime(5000); // blocked: P = 0 is at risk (from 4800)
    const done = liveness.want();
    write(liveness); // pairs with the read sent at 800: P moves, at risk only from 5600, still stale
    expect(liveness.provenAt).toBe(800);
    expect(liveness.stale).toBe(true);
    provenAgain(liveness, done); // P + T = 6800 passes; a heartbeat sent a pair gap after the barrier proves it
    // Trusted again for a while by the moved proof, at risk again from its own risk, never given up.
    expect(calls.filter((c) => !c.startsWith('anchor') && !c.startsWith('heartbeat'))).toEqual([
      `at-risk@5000 unproven 5000`,
      `recovered@5000`,
      `at-risk@5600 unproven 4800`,
      expect.stringMatching(/^recovered@/),
    ]);
    liveness.stop();
  });

  it('once nothing waits (`want` done) and nothing is held, heartbeats are reads again', () => {
    const { liveness, calls, hooks } = idle();
    answerHeartbeats({ liveness, calls, hooks });
    jest.advanceTimersByTime(1000);
    const done = liveness.want();
    jest.advanceTimersByTime(1000);
    expect(only(calls, 'heartbeat').length).toBeGreaterThan(0);
    done();
    done(); // once only
    calls.splice(0);
    jest.advanceTimersByTime(2000);
    expect(only(calls, 'heartbeat')).toEqual([]);
    expect(only(calls, 'anchor').length).toBeGreaterThan(0);
    liveness.stop();
  });

  it('a write slow to commit while idle is waited out: the proof is not kept fresh, so it is no sign of a cut-off server', () => {
    const { liveness, calls, hooks } = idle();
    jest.advanceTimersByTime(T);
    write(liveness); // 6000: pairs with the read sent at 4000 (answered at 4005)
    expect(liveness.provenAt).toBe(4000);
    hooks.pendingWrite = Date.now(); // then a release's delete, taking its time
    jest.advanceTimersByTime(1400); // 7400: the proof is 3400 old (> T/2), the write 1400 (> T/10)
    expect(only(calls, 'drop')).toEqual([]);
    hooks.idle = false; // held again: the same write now means the server may be cut off
    jest.advanceTimersByTime(200); // 7600: before the risk (8800), and leaves the server
    expect(calls.filter((c) => !c.startsWith('anchor') && !c.startsWith('heartbeat'))).toEqual([
      'drop@7600 before 7600',
    ]);
    liveness.stop();
  });

  it('at risk when the work ended: heartbeats stay writes until a proof brings trust back, then reads again', () => {
    const { liveness, calls, hooks } = setup();
    liveness.onConnected(0, true);
    jest.advanceTimersByTime(3000);
    read(liveness); // answered at 3000; then the server answers nothing
    jest.advanceTimersByTime(1800); // 4800, held: at risk
    expect(only(calls, 'at-risk')).toHaveLength(1);
    hooks.idle = true; // the lost holder released
    answerHeartbeats({ liveness, calls, hooks });
    calls.splice(0);
    jest.advanceTimersByTime(T);
    expect(only(calls, 'recovered')).toHaveLength(1);
    const recoveredAt = Number(only(calls, 'recovered')[0].split('@')[1]);
    const late = calls.filter((c) => Number(c.split('@')[1]) > recoveredAt + 400);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((c) => c.startsWith('anchor'))).toBe(true);
    liveness.stop();
  });
});
