import { LockAbortedError, LockTimeoutError, ZkLockError } from '../../../lib/index';
import { queued, queueShape, rejectionOf, track, turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function waitCases(ctx: ConformanceContext): void {
  it('tryAcquire answers null at once when the lock is held, and leaves no entry', async () => {
    const name = ctx.name('try-held');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name);
    expect(await b.tryAcquire(name)).toBeNull();
    expect(await b.tryAcquire(name, { mode: 'read' })).toBeNull();
    expect(await queueShape(a, name)).toEqual([['write', true]]);
    await held.release();
  });

  it('tryAcquire grants a free lock in the mode asked for, and a shared one to a reader', async () => {
    const name = ctx.name('try-free');
    const [a, b] = await ctx.world.backends(2);
    const r1 = await a.tryAcquire(name, { mode: 'read' });
    const r2 = await b.tryAcquire(name, { mode: 'read' });
    expect([r1?.mode, r2?.mode]).toEqual(['read', 'read']);
    expect(r1!.isHeld() && r2!.isHeld()).toBe(true);
    await Promise.all([r1!.release(), r2!.release()]);
    await r1!.releaseConfirmed; // a's node, gone for b once confirmed
    const w = await b.tryAcquire(name);
    expect(w?.mode).toBe('write');
    await w!.release();
  });

  it('acquire with timeoutMs 0 fails at once with LockTimeoutError when held, and leaves no entry', async () => {
    const name = ctx.name('zero');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name, { mode: 'read' });
    const error = await rejectionOf(b.acquire(name, { timeoutMs: 0 }));
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error).toMatchObject({
      name: 'LockTimeoutError',
      code: 'LOCK_TIMEOUT',
      lockName: name,
      mode: 'write',
      timeoutMs: 0,
    });
    expect((error as Error).message).toContain(name);
    expect(await queueShape(a, name)).toEqual([['read', true]]);
    // A free lock, or a shared one, is granted with timeoutMs 0.
    await (await b.acquire(name, { mode: 'read', timeoutMs: 0 })).release();
    await held.release();
  });

  it('a timed-out acquire rejects with LockTimeoutError after timeoutMs and leaves no entry', async () => {
    const name = ctx.name('timeout');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name);
    const started = performance.now();
    const error = await rejectionOf(b.acquire(name, { mode: 'read', timeoutMs: 120 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(115); // timers may fire a millisecond early
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', lockName: name, mode: 'read', timeoutMs: 120 });
    expect((error as Error).message).toContain('120 ms');
    expect(await queueShape(a, name)).toEqual([['write', true]]);
    await held.release();
  });

  it('an already aborted signal rejects with LockAbortedError and queues nothing', async () => {
    const name = ctx.name('pre-aborted');
    const [a] = await ctx.world.backends(1);
    const reason = new Error('gave up before asking');
    for (const call of [
      () => a.acquire(name, { signal: AbortSignal.abort(reason) }),
      () => a.tryAcquire(name, { signal: AbortSignal.abort(reason) }),
    ]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(LockAbortedError);
      expect(error).toMatchObject({ code: 'LOCK_ABORTED', lockName: name });
      expect((error as LockAbortedError).cause).toBe(reason);
    }
    expect(await a.contenders(name)).toEqual([]);
  });

  it('an abort during the wait rejects with LockAbortedError and leaves no entry', async () => {
    const name = ctx.name('abort');
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name);
    const controller = new AbortController();
    const waiting = rejectionOf(b.acquire(name, { signal: controller.signal }));
    await queued(a, name, 2);
    const reason = new Error('user gave up');
    controller.abort(reason);
    const error = await waiting;
    expect(error).toBeInstanceOf(LockAbortedError);
    expect(error).toMatchObject({ code: 'LOCK_ABORTED', lockName: name });
    expect((error as LockAbortedError).cause).toBe(reason);
    expect(await queueShape(a, name)).toEqual([['write', true]]);
    await held.release();
  });

  it('a waiting writer that gives up lets the readers queued behind it in', async () => {
    const name = ctx.name('gives-up');
    const [a, b, c] = await ctx.world.backends(3);
    const r1 = await a.acquire(name, { mode: 'read' });
    const controller = new AbortController();
    const writer = rejectionOf(b.acquire(name, { signal: controller.signal }));
    await queued(a, name, 2);
    const reader = track(c.acquire(name, { mode: 'read', timeoutMs: 10_000 }));
    await queued(a, name, 3);
    await turns();
    expect(reader.granted()).toBe(false);

    controller.abort();
    expect(await writer).toBeInstanceOf(LockAbortedError);
    const r2 = await reader.result; // granted while r1 still holds
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['read', true],
    ]);
    await Promise.all([r1.release(), r2.release()]);
  });

  it('a waiter that gives up in the middle does not let the next one past the holder', async () => {
    const name = ctx.name('middle-gives-up');
    const [a, b, c] = await ctx.world.backends(3);
    const held = await a.acquire(name);
    const controller = new AbortController();
    const middle = rejectionOf(b.acquire(name, { signal: controller.signal }));
    await queued(a, name, 2);
    const last = track(c.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 3);

    controller.abort();
    expect(await middle).toBeInstanceOf(LockAbortedError);
    await queued(a, name, 2);
    await turns();
    expect(last.granted()).toBe(false);
    expect(await queueShape(a, name)).toEqual([
      ['write', true],
      ['write', false],
    ]);
    await held.release();
    await (await last.result).release();
  });
}
