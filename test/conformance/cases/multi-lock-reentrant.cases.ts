import { setTimeout as sleep } from 'node:timers/promises';

import { LockLostError, LockOrderError, LockUpgradeError, ReentrantLocker, type LockBackend } from '../../../lib/index';
import { OverlapMeter, queued, queueShape, rejectionOf, track, type Tracked } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

/** Names sorted as the canonical order sorts them: these are plain ASCII, so as strings. */
const sorted = (...names: string[]): string[] => [...names].sort();

/** How many contenders each name has. */
const counts = (backend: LockBackend, names: string[]): Promise<number[]> =>
  Promise.all(names.map(async (name) => (await backend.contenders(name)).length));

/** `ReentrantLocker.acquireAll` and `withLocks` over any backend: reentrancy per call chain, per name. */
export function multiLockReentrantCases(ctx: ConformanceContext): void {
  const lockerOf = async (): Promise<{ locker: ReentrantLocker; backend: LockBackend }> => {
    const [backend] = await ctx.world.backends(1);
    return { locker: new ReentrantLocker(backend, Infinity), backend };
  };

  it('withLocks holds every name while fn runs and releases them after; nested calls are reentrant', async () => {
    const [a, b] = [ctx.name('with-a'), ctx.name('with-b')];
    const { locker } = await lockerOf();
    const [observer] = await ctx.world.backends(1);
    const seen = await locker.withLocks([b, a], async (group) => {
      const nested = await locker.withLock(
        a,
        async (inner) => ({ token: inner.fencingToken, shape: await queueShape(observer, a) }),
        { timeoutMs: 0 },
      );
      const again = await locker.withLocks(
        [{ name: b, mode: 'read' }],
        async (inner) => inner.handles[0].fencingToken,
        { timeoutMs: 0 },
      );
      return { group, nested, again, counts: await counts(observer, [a, b]) };
    });
    expect(seen.group.names).toEqual(sorted(a, b));
    expect(seen.nested.token).toBe(seen.group.handles[seen.group.names.indexOf(a)].fencingToken);
    expect(seen.nested.shape).toEqual([['write', true]]);
    expect(seen.again).toBe(seen.group.handles[seen.group.names.indexOf(b)].fencingToken);
    expect(seen.counts).toEqual([1, 1]);
    expect(seen.group.released).toBe(true);
    expect(await counts(observer, [a, b])).toEqual([0, 0]);
  });

  it('joins the names the chain holds (no contender, no wait) and takes only the others', async () => {
    const [a, b] = [ctx.name('join-a'), ctx.name('join-b')];
    const { locker } = await lockerOf();
    const [observer] = await ctx.world.backends(1);
    const seen = await locker.withLock(a, async (outer) => {
      const group = await locker.acquireAll([a, b], { timeoutMs: 0 });
      const during = await counts(observer, [a, b]);
      const token = group.handles[group.names.indexOf(a)].fencingToken;
      await group.release();
      return {
        during,
        after: await counts(observer, [a, b]),
        joinedToken: token,
        outerToken: outer.fencingToken,
        outerHeld: outer.isHeld(),
      };
    });
    expect(seen.during).toEqual([1, 1]); // one node on a: the outer grant's
    expect(seen.after).toEqual([1, 0]); // releasing the group ended the join only
    expect(seen.joinedToken).toBe(seen.outerToken);
    expect(seen.outerHeld).toBe(true);
    expect(await counts(observer, [a, b])).toEqual([0, 0]);
  });

  it('refuses write on a name the chain holds for read at once, with LockUpgradeError, holding nothing', async () => {
    const [a, b] = [ctx.name('upgrade-a'), ctx.name('upgrade-b')];
    const { locker } = await lockerOf();
    const [observer] = await ctx.world.backends(1);
    const error = await rejectionOf(
      locker.withLock(a, () => locker.withLocks([b, a], () => 'never', { timeoutMs: 60_000 }), { mode: 'read' }),
    );
    expect(error).toBeInstanceOf(LockUpgradeError);
    expect(error).toMatchObject({ lockName: a });
    expect(await counts(observer, [a, b])).toEqual([0, 0]);
    // read inside write is fine
    await expect(locker.withLock(a, () => locker.withLocks([{ name: a, mode: 'read' }, b], () => 'ran'))).resolves.toBe(
      'ran',
    );
  });

  it('refuses at once, with LockOrderError, to wait for a name before a lock held, where a rival waits in order', async () => {
    const [a, b] = [ctx.name('order-a'), ctx.name('order-b')];
    const { locker } = await lockerOf();
    const [rivalBackend, observer] = await ctx.world.backends(2);
    const rival = new ReentrantLocker(rivalBackend, Infinity);
    let rivalRan: Promise<string> | undefined;
    const seen = await locker.withLock(b, async () => {
      // The rival takes a, then waits for b behind this chain: the first half of a deadlock.
      rivalRan = rival.withLocks([a, b], () => 'rival ran');
      await queued(observer, b, 2);
      // Waiting for a here would close the cycle; the timeout only makes an old bug fail fast.
      const error = await rejectionOf(locker.withLocks([a, b], () => 'never', { timeoutMs: 5_000 }));
      return { error, onA: await counts(observer, [a]) };
    });
    expect(seen.error).toBeInstanceOf(LockOrderError);
    expect(seen.error).toMatchObject({ code: 'LOCK_ORDER', heldNames: [b], missingNames: [a] });
    expect(seen.onA).toEqual([1]); // the rival's: the refused call left nothing
    await expect(rivalRan).resolves.toBe('rival ran');
    expect(await counts(observer, [a, b])).toEqual([0, 0]);
  });

  it('counts every lock the chain still holds on this client (withLock, withLocks, runHolding), listed or not, in any mode', async () => {
    const [a, b, z] = [ctx.name('outside-a'), ctx.name('outside-b'), ctx.name('outside-z')];
    const { locker } = await lockerOf();
    const [observer] = await ctx.world.backends(1);
    const errors = [
      await locker.withLock(z, () => rejectionOf(locker.withLocks([b, a], () => 'never')), { mode: 'read' }),
      await locker.withLock(z, () => rejectionOf(locker.acquireAll([{ name: a, mode: 'read' }])), { mode: 'read' }),
      await locker.withLocks([z, b], () => rejectionOf(locker.withLocks([a], () => 'never'))),
    ];
    const handle = await locker.acquire(z);
    errors.push(await locker.runHolding(handle, () => rejectionOf(locker.withLocks([a], () => 'never'))));
    await handle.release();
    // Reentrancy, and so the rule, is per lock client: z held through another one is not this one's.
    const [otherBackend] = await ctx.world.backends(1);
    const other = new ReentrantLocker(otherBackend, Infinity);
    await expect(other.withLock(z, () => locker.withLocks([a], () => 'ran'))).resolves.toBe('ran');
    // Work started under z that runs after z is released holds nothing: it may take a.
    let zReleased!: () => void;
    const afterZ = new Promise<void>((resolve) => (zReleased = resolve));
    let detached: Promise<string> | undefined;
    await locker.withLock(z, () => {
      detached = afterZ.then(() => locker.withLocks([a], () => 'ran after z'));
    });
    zReleased();
    await expect(detached).resolves.toBe('ran after z');
    expect(errors.map((error) => error instanceof LockOrderError)).toEqual([true, true, true, true]);
    expect(errors[0]).toMatchObject({ heldNames: [z], missingNames: [a, b] });
    expect(errors[1]).toMatchObject({ heldNames: [z], missingNames: [a] });
    expect(errors[2]).toMatchObject({ heldNames: [b, z], missingNames: [a] });
    expect(errors[3]).toMatchObject({ heldNames: [z], missingNames: [a] });
    expect(await counts(observer, [a, b, z])).toEqual([0, 0, 0]);
  });

  it('joins the locks held when every name still to take sorts after them: a rival in order waits, no deadlock', async () => {
    const [a, b, c] = [ctx.name('after-a'), ctx.name('after-b'), ctx.name('after-c')];
    const { locker } = await lockerOf();
    const [rivalBackend, observer] = await ctx.world.backends(2);
    const rival = new ReentrantLocker(rivalBackend, Infinity);
    const order: string[] = [];
    let rivalRan: Tracked<string> | undefined;
    const seen = await locker.withLock(a, async (outer) => {
      rivalRan = track(rival.withLocks([c, a], () => (order.push('rival'), 'rival ran')));
      await queued(observer, a, 2); // the rival waits for a, holding nothing after it
      return locker.withLocks([c, b, a], async (group) => {
        order.push('chain');
        return { joined: group.handles[0].fencingToken === outer.fencingToken, counts: await counts(observer, [b, c]) };
      });
    });
    expect(seen).toEqual({ joined: true, counts: [1, 1] });
    await expect(rivalRan!.result).resolves.toBe('rival ran');
    expect(order).toEqual(['chain', 'rival']);
    expect(await counts(observer, [a, b, c])).toEqual([0, 0, 0]);
  });

  it('sibling branches exclude each other, each with grants of its own', async () => {
    const [a, b] = [ctx.name('sib-a'), ctx.name('sib-b')];
    const { locker } = await lockerOf();
    const meter = new OverlapMeter();
    const section = (order: string[]): Promise<bigint> =>
      locker.withLocks(order, async (group) => {
        meter.enter('write');
        await sleep(3);
        meter.leave('write');
        return group.handles[0].fencingToken;
      });
    const tokens = await Promise.all([section([a, b]), section([b, a]), section([a, b])]);
    expect(meter.violations).toEqual([]);
    expect(new Set(tokens).size).toBe(3);
  });

  it('withLocks rejects with the LockLostError when a lock was lost while fn ran', async () => {
    const [a, b] = [ctx.name('wl-lost-a'), ctx.name('wl-lost-b')];
    const holder = await ctx.world.losable();
    const locker = new ReentrantLocker(holder, Infinity);
    const error = await rejectionOf(
      locker.withLocks([a, b], async (group) => {
        await ctx.world.lose(holder, group.handles[0]);
        return 'done, but not under the locks';
      }),
    );
    expect(error).toBeInstanceOf(LockLostError);
    expect(await counts(holder, [a, b])).toEqual([0, 0]);
  });
}
