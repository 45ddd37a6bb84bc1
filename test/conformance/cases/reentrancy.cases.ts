import { setTimeout as sleep } from 'node:timers/promises';

import { LockLostError, LockUpgradeError, ReentrantLocker } from '../../../lib/index';
import { OverlapMeter, queueShape, rejectionOf } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function reentrancyCases(ctx: ConformanceContext): void {
  const lockerOf = async (): Promise<ReentrantLocker> =>
    new ReentrantLocker((await ctx.world.backends(1))[0], Infinity);

  it('nested withLock re-enters without a new contender or a wait, with the same token', async () => {
    const name = ctx.name('reenter');
    const [observer] = await ctx.world.backends(1);
    const locker = await lockerOf();
    const seen = await locker.withLock(name, async (outer) => {
      const inner = await locker.withLock(
        name,
        async (handle) => ({ token: handle.fencingToken, shape: await queueShape(observer, name) }),
        { timeoutMs: 0 },
      );
      const again = await locker.acquire(name, { timeoutMs: 0 });
      await again.release(); // ends this hold only: the outer grant stays
      return { ...inner, outer: outer.fencingToken, held: outer.isHeld(), after: await queueShape(observer, name) };
    });
    expect(seen.token).toBe(seen.outer);
    expect(seen.shape).toEqual([['write', true]]);
    expect(seen.after).toEqual([['write', true]]);
    expect(seen.held).toBe(true);
    expect(await observer.contenders(name)).toEqual([]); // released when the outermost hold ended
  });

  it('allows read inside write, and refuses write inside read at once with LockUpgradeError', async () => {
    const name = ctx.name('upgrade');
    const [observer] = await ctx.world.backends(1);
    const locker = await lockerOf();
    await expect(locker.withLock(name, () => locker.withLock(name, () => 'read ran', { mode: 'read' }))).resolves.toBe(
      'read ran',
    );
    const error = await rejectionOf(
      locker.withLock(name, () => locker.withLock(name, () => 'never'), { mode: 'read' }),
    );
    expect(error).toBeInstanceOf(LockUpgradeError);
    expect(error).toMatchObject({ code: 'LOCK_UPGRADE', lockName: name });
    expect(await observer.contenders(name)).toEqual([]);
  });

  it('sibling Promise.all branches exclude each other, each with a grant of its own', async () => {
    const name = ctx.name('siblings');
    const locker = await lockerOf();
    const meter = new OverlapMeter();
    const section = (): Promise<bigint> =>
      locker.withLock(name, async (handle) => {
        meter.enter('write');
        await sleep(5);
        meter.leave('write');
        return handle.fencingToken;
      });
    const tokens = await Promise.all([section(), section(), section()]);
    expect(meter.violations).toEqual([]);
    expect(new Set(tokens).size).toBe(3);
  });

  it('keeps other clients out while the chain holds', async () => {
    const name = ctx.name('chain-excludes');
    const [other] = await ctx.world.backends(1);
    const locker = await lockerOf();
    await locker.withLock(name, async () => {
      await locker.withLock(name, async () => expect(await other.tryAcquire(name)).toBeNull());
      expect(await other.tryAcquire(name)).toBeNull();
    });
    // The release resolves once its delete is sent; another connection sees it once confirmed.
    await ctx.world.releasesConfirmed();
    const after = await other.tryAcquire(name);
    expect(after).not.toBeNull();
    await after!.release();
  });

  it('rejects with the LockLostError when the lock was lost while the body ran', async () => {
    const name = ctx.name('lost-body');
    const holder = await ctx.world.losable();
    const locker = new ReentrantLocker(holder, Infinity);
    const error = await rejectionOf(
      locker.withLock(name, async (handle) => {
        await ctx.world.lose(holder, handle);
        return 'done, but not under the lock';
      }),
    );
    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ lockName: name });
  });
}
