import { setTimeout as sleep } from 'node:timers/promises';

import {
  InvalidOptionError,
  LockLostError,
  ReentrantLocker,
  type LockBackend,
  type LockLostEvent,
  type MultiLockHandle,
} from '../../../lib/index';
import { waitUntil } from '../../support/wait-until';
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

  it('acquireAll: the clock starts once the whole group is held; then every lock is told, and released for the next', async () => {
    const [first, second] = [ctx.name('max-hold-group-a'), ctx.name('max-hold-group-b')];
    const [mine, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(second);
    const pending = track(mine.acquireAll([first, second], { maxHoldMs: MAX_HOLD_MS }));
    await waitUntil(async () => (await mine.contenders(first)).some((c) => c.holding), 'the first lock held early');
    const [early] = await mine.contenders(first);
    await sleep(MAX_HOLD_MS + 200); // the first lock is held past maxHoldMs while the second is awaited
    await blocker.release();
    const group = await pending.result;
    // Not run out, nor taken again: the lock granted early is the same node, and held.
    expect(await mine.contenders(first)).toEqual([early]);
    expect(group.isHeld()).toBe(true);
    const order: string[] = [];
    group.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
    const next = await other
      .acquireAll([first, second], { timeoutMs: 10_000 })
      .then((locks) => (order.push('other granted'), locks));
    expect(order).toEqual(['holder told', 'other granted']);
    for (const handle of [group, ...group.handles]) {
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      expect((handle.signal.reason as Error).message).toContain(`maxHoldMs (${MAX_HOLD_MS} ms)`);
      expect(handle.isHeld()).toBe(false);
    }
    await group.release(); // the late release does nothing to the new holder
    expect(next.isHeld()).toBe(true);
    await next.release();
  });

  it("withLocks: a body that hangs past maxHoldMs is told, the group goes to the next, the call rejects ('ignore' keeps the result); the locker's default applies", async () => {
    const names = [ctx.name('max-hold-with-locks-a'), ctx.name('max-hold-with-locks-b')];
    const [mine, other] = await ctx.world.backends(2);
    const lost: LockLostEvent[] = [];
    const events = { lost: (e: LockLostEvent) => void lost.push(e) };
    const lockers = {
      own: new ReentrantLocker(mine, 10_000, events),
      byDefault: new ReentrantLocker(mine, 10_000, events, MAX_HOLD_MS),
    };
    const runs = [
      { locker: lockers.own, options: { maxHoldMs: MAX_HOLD_MS, onLockLost: 'reject' as const } },
      { locker: lockers.own, options: { maxHoldMs: MAX_HOLD_MS, onLockLost: 'ignore' as const } },
      { locker: lockers.byDefault, options: {} },
    ];
    for (const { locker, options } of runs) {
      let next: Promise<MultiLockHandle> | undefined;
      const call = locker.withLocks(
        names,
        async (group) => {
          const order: string[] = [];
          group.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
          next = other.acquireAll(names).then((locks) => (order.push('other granted'), locks));
          await next; // hangs until the other client is granted
          return order;
        },
        options,
      );
      if (options.onLockLost === 'ignore') {
        expect(await call).toEqual(['holder told', 'other granted']);
      } else {
        const error = await rejectionOf(call);
        expect(error).toBeInstanceOf(LockLostError);
        expect((error as Error).message).toContain('maxHoldMs');
      }
      await (await next!).release();
    }
    // One event per call, naming the group.
    expect(lost.map((e) => [e.name, e.ignored])).toEqual([
      [names.join(', '), false],
      [names.join(', '), true],
      [names.join(', '), false],
    ]);
    for (const event of lost) expect(event.error.why).toContain('maxHoldMs');
  });

  it("the locker's default maxHoldMs applies to acquireAll naming none; a call of its own wins", async () => {
    const names = [ctx.name('max-hold-group-default-a'), ctx.name('max-hold-group-default-b')];
    const [mine] = await ctx.world.backends(1);
    const locker = new ReentrantLocker(mine, 10_000, {}, MAX_HOLD_MS);
    const byDefault = await locker.acquireAll(names);
    const own = await locker.acquireAll([ctx.name('max-hold-group-own')], { maxHoldMs: 60_000 });
    await waitUntil(() => byDefault.signal.aborted, 'the default maxHoldMs ran out');
    expect((byDefault.signal.reason as Error).message).toContain(`maxHoldMs (${MAX_HOLD_MS} ms)`);
    expect(own.isHeld()).toBe(true);
    await byDefault.release();
    await own.release();
  });

  it('a group joining a lock its call chain holds: maxHoldMs runs out the locks it took, the joined one keeps its own clock', async () => {
    const [held, taken] = [ctx.name('max-hold-join-a'), ctx.name('max-hold-join-b')];
    const [mine, other] = await ctx.world.backends(2);
    const locker = new ReentrantLocker(mine, 10_000);
    await locker.withLock(held, async (outer) => {
      const group = await locker.acquireAll([held, taken], { maxHoldMs: MAX_HOLD_MS });
      const next = await other.acquire(taken, { timeoutMs: 10_000 }); // only maxHoldMs frees it
      expect(group.signal.aborted).toBe(true);
      expect((group.signal.reason as Error).message).toContain('maxHoldMs');
      expect(outer.isHeld()).toBe(true);
      expect(await other.tryAcquire(held)).toBeNull();
      await group.release();
      await next.release();
    });
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
      () => a.acquireAll([name], { maxHoldMs: value as number }),
      () => locker.withLocks([name], () => undefined, { maxHoldMs: value as number }),
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
