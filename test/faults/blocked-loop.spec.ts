import { LockLostError } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

/** Blocks the event loop for `ms`: no timer, no socket read, runs meanwhile. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/**
 * The trust deadline is not only a timer: a holder whose event loop was blocked past it
 * (a long synchronous computation, a GC pause) sees its lock as lost on the first read of
 * the signal after it, before any timer runs, while the server has already handed the
 * lock on.
 */
describe('a holder whose event loop was blocked past its session', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('blocked-loop')));
  afterAll(() => fx.cleanup());

  it('reads signal.aborted === true at once, and isHeld() false, before any timer has run', async () => {
    // The holder's session is short; everything else in this (blocked) process keeps a
    // 4 s session, which outlives the block.
    const holder = await fx.backend({ sessionTimeoutMs: 1000 });
    const next = await fx.backend();
    const held = await holder.acquire('blocked');
    const waiting = next.acquire('blocked', { timeoutMs: 30_000 });
    await fx.queued('blocked', 2);
    expect(held.signal.aborted).toBe(false);

    blockFor(holder.client.session.timeoutMs + 800); // the server expires the holder's session meanwhile
    // Still in the same synchronous run: no timer has fired, no byte has been read.
    const abortedAtOnce = held.signal.aborted;
    expect(abortedAtOnce).toBe(true); // synchronous: still no timer has run
    const heldAtOnce = held.isHeld();
    let thrown: unknown;
    try {
      held.assertHeld();
    } catch (error) {
      thrown = error;
    }
    expect(heldAtOnce).toBe(false);
    expect(thrown).toBeInstanceOf(LockLostError);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);

    const lock = await waiting; // the other client got it: the holder was right to stop
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    await lock.release();
    await held.release(); // its session is gone: nothing to delete
  });
});
