import { lockMessages } from '../../../lib/core/errors/messages';
import { LockClientClosedError, LockLostError } from '../../../lib/index';
import { queued, queueShape, rejectionOf } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function lifecycleCases(ctx: ConformanceContext): void {
  it('cancelWaits fails every wait with LockClientClosedError and keeps held locks', async () => {
    const [name, other] = [ctx.name('cancel'), ctx.name('cancel-other')];
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(other);
    const blocker = await b.acquire(name);
    const waits = [rejectionOf(a.acquire(name)), rejectionOf(a.acquire(name, { mode: 'read', timeoutMs: 60_000 }))];
    await queued(b, name, 3);

    await a.cancelWaits();
    for (const error of await Promise.all(waits)) expect(error).toBeInstanceOf(LockClientClosedError);
    expect(await queueShape(b, name)).toEqual([['write', true]]);
    expect(held.isHeld()).toBe(true);
    expect(await b.tryAcquire(other)).toBeNull();
    // Only waits end: the client still works.
    await blocker.release();
    await (await a.acquire(name, { timeoutMs: 10_000 })).release();
    await held.release();
  });

  it('close() aborts held signals, then releases: others get the lock; own waits and later calls fail', async () => {
    const [name, waitedOn] = [ctx.name('close'), ctx.name('close-waited')];
    const [a, b] = await ctx.world.backends(2);
    const held = await a.acquire(name);
    const releasedWhenAborted: boolean[] = [];
    held.signal.addEventListener('abort', () => releasedWhenAborted.push(held.released));
    const blocker = await b.acquire(waitedOn);
    const aWaits = rejectionOf(a.acquire(waitedOn));
    await queued(b, waitedOn, 2);
    const bWaits = b.acquire(name, { timeoutMs: 10_000 });
    await queued(b, name, 2);

    await a.close();
    expect(await aWaits).toBeInstanceOf(LockClientClosedError);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect(held.signal.reason.message).toContain(lockMessages.closingUnderHolder);
    expect(releasedWhenAborted).toEqual([false]); // told first, released after
    expect(held.released).toBe(true);
    const got = await bWaits; // handed on at once
    expect(await queueShape(b, waitedOn)).toEqual([['write', true]]);

    await a.close(); // again: fine
    for (const call of [() => a.acquire(name), () => a.tryAcquire(name), () => a.contenders(name)]) {
      expect(await rejectionOf(call())).toBeInstanceOf(LockClientClosedError);
    }
    await Promise.all([got.release(), blocker.release()]);
  });
}
