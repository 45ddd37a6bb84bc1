import { setTimeout as sleep } from 'node:timers/promises';

import {
  InvalidOptionError,
  LockLostError,
  ReentrantLocker,
  type LockBackend,
  type LockLostEvent,
} from '../../../lib/index';
import { queued, rejectionOf, track } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

/** Short, so that the suite stays quick on ZooKeeper; the cases assert order, not timing. */
const MAX_HOLD_MS = 300;

const BAD_VALUES: unknown[] = [0, -1, 1.5, NaN, Infinity, '500', Number.MAX_SAFE_INTEGER + 1];

/**
 * Records, in order, the holder being told (its signal aborting) and `other` being granted
 * `name`: the holder must hear first.
 */
function recordOrder(held: { signal: AbortSignal }, other: LockBackend, name: string) {
  const order: string[] = [];
  held.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
  const granted = track(other.acquire(name).then((lock) => (order.push('other granted'), lock)));
  return { order, granted };
}

export function maxHoldCases(ctx: ConformanceContext): void {
  it('a holder that hangs past maxHoldMs is told first (LockLostError naming maxHoldMs), then the lock goes to the next', async () => {
    const name = ctx.name('max-hold');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name, { maxHoldMs: MAX_HOLD_MS });
    const { order, granted } = recordOrder(held, b, name);
    await queued(b, name, 2);
    const next = await granted.result; // the holder never releases: only maxHoldMs can end its hold
    expect(order).toEqual(['holder told', 'other granted']);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect((held.signal.reason as Error).message).toContain(`maxHoldMs (${MAX_HOLD_MS} ms)`);
    expect(held.isHeld()).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    expect((await b.contenders(name)).map((c) => c.holding)).toEqual([true]);
    await held.release(); // the late release does nothing to the new holder
    expect(next.isHeld()).toBe(true);
    await next.release();
  });

  it('a lease held past maxHoldMs is told first, then the next waiter gets it', async () => {
    const name = ctx.name('max-hold-lease');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquireLease(name, { maxLeases: 1, maxHoldMs: MAX_HOLD_MS });
    const order: string[] = [];
    held.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
    const next = await b.acquireLease(name, { maxLeases: 1 }).then((lease) => (order.push('other granted'), lease));
    expect(order).toEqual(['holder told', 'other granted']);
    expect((held.signal.reason as Error).message).toContain('maxHoldMs');
    await held.release();
    await next.release();
  });

  it('released before maxHoldMs: nothing happens later (the timer is cleared)', async () => {
    const name = ctx.name('max-hold-released');
    const [a] = await ctx.world.backends(1);
    const lock = await a.acquire(name, { maxHoldMs: 100 });
    await lock.release();
    const again = await a.acquire(name);
    await sleep(250);
    expect(lock.signal.aborted).toBe(false);
    expect(again.isHeld()).toBe(true);
    await again.release();
  });

  it("withLock: a body that hangs past maxHoldMs is told, the other client is granted, and the call rejects with LockLostError ('ignore' keeps the result)", async () => {
    const name = ctx.name('max-hold-with-lock');
    const [mine, other] = await ctx.world.backends(2);
    const lost: LockLostEvent[] = [];
    const locker = new ReentrantLocker(mine, 10_000, { lost: (e) => lost.push(e) });
    for (const onLockLost of ['reject', 'ignore'] as const) {
      let next: Promise<{ release(): Promise<void> }> | undefined;
      const call = locker.withLock(
        name,
        async (lock) => {
          const { order, granted } = recordOrder(lock, other, name);
          next = granted.result;
          // A nested call joins the grant: its maxHoldMs neither restarts nor extends the clock.
          await locker.withLock(name, () => undefined, { maxHoldMs: 60_000 });
          await granted.result; // hangs until the other client is granted
          return order;
        },
        { maxHoldMs: MAX_HOLD_MS, onLockLost },
      );
      if (onLockLost === 'reject') {
        const error = await rejectionOf(call);
        expect(error).toBeInstanceOf(LockLostError);
        expect((error as Error).message).toContain('maxHoldMs');
      } else {
        expect(await call).toEqual(['holder told', 'other granted']);
      }
      await (await next!).release();
    }
    expect(lost.map((e) => [e.name, e.ignored])).toEqual([
      [name, false],
      [name, true],
    ]);
    expect(lost[0].error.why).toContain('maxHoldMs');
  });

  it('a default maxHoldMs of the locker applies to calls naming none; a call of its own wins', async () => {
    const name = ctx.name('max-hold-default');
    const [mine, other] = await ctx.world.backends(2);
    const locker = new ReentrantLocker(mine, 10_000, {}, MAX_HOLD_MS);
    const byDefault = await locker.acquire(name);
    const { order, granted } = recordOrder(byDefault, other, name);
    await (await granted.result).release();
    expect(order).toEqual(['holder told', 'other granted']);
    await byDefault.release();
    const own = await locker.acquire(name, { maxHoldMs: 60_000 });
    await sleep(MAX_HOLD_MS + 200);
    expect(own.isHeld()).toBe(true);
    await own.release();
  });

  it.each(BAD_VALUES)('maxHoldMs %p: InvalidOptionError naming maxHoldMs, and nothing queued', async (value) => {
    const name = ctx.name('max-hold-bad');
    const [a] = await ctx.world.backends(1);
    const locker = new ReentrantLocker(a, 1_000);
    const calls: Array<() => Promise<unknown>> = [
      () => a.acquire(name, { maxHoldMs: value as number }),
      () => a.tryAcquire(name, { maxHoldMs: value as number }),
      () => a.acquireLease(name, { maxLeases: 1, maxHoldMs: value as number }),
      () => locker.withLock(name, () => undefined, { maxHoldMs: value as number }),
      () => locker.withLease(name, () => undefined, { maxLeases: 1, maxHoldMs: value as number }),
    ];
    for (const call of calls) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'maxHoldMs' });
    }
    expect(() => new ReentrantLocker(a, 1_000, {}, value as number)).toThrow(InvalidOptionError);
    expect(await a.contenders(name)).toEqual([]);
  });
}
