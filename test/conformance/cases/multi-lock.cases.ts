import { setTimeout as sleep } from 'node:timers/promises';

import {
  InvalidLockListError,
  InvalidLockNameError,
  InvalidOptionError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ReentrantLocker,
  type LockBackend,
  type LockList,
  type MultiAcquireOptions,
} from '../../../lib/index';
import { thrownBy } from '../../support/thrown-by';
import { waitUntil } from '../../support/wait-until';
import { acquireAll, OverlapMeter, queueShape, rejectionOf, track } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';
import { multiLockReentrantCases } from './multi-lock-reentrant.cases';

/** Names sorted as the canonical order sorts them: these are plain ASCII, so as strings. */
const sorted = (...names: string[]): string[] => [...names].sort();

/** How many contenders each name has. */
const counts = (backend: LockBackend, names: string[]): Promise<number[]> =>
  Promise.all(names.map(async (name) => (await backend.contenders(name)).length));

/**
 * Waits until `names` have `expected` contenders, and still have them a moment later: the
 * state of a call that waits. Not just "two contenders on the blocked name": the first
 * wave's try on it makes two for a moment too, before it is withdrawn.
 */
async function waitsWith(observer: LockBackend, names: string[], expected: number[]): Promise<void> {
  const same = async (): Promise<boolean> => JSON.stringify(await counts(observer, names)) === JSON.stringify(expected);
  await waitUntil(same, `${JSON.stringify(expected)} contenders on ${names.join(', ')}`);
  await sleep(20);
  expect(await counts(observer, names)).toEqual(expected);
}

export function multiLockCases(ctx: ConformanceContext): void {
  it('takes free locks together, once each, in the canonical order and in the mode asked', async () => {
    const [a, b, c] = [ctx.name('free-a'), ctx.name('free-b'), ctx.name('free-c')];
    const [client, other] = await ctx.world.backends(2);
    const group = await acquireAll(client, [c, { name: a, mode: 'read' }, b, { name: b, mode: 'read' }]);
    expect(group.names).toEqual(sorted(a, b, c));
    expect(group.handles.map((h) => [h.name, h.mode])).toEqual(
      sorted(a, b, c).map((n) => [n, n === a ? 'read' : 'write']),
    );
    expect(group.isHeld()).toBe(true);
    expect(() => group.assertHeld()).not.toThrow();
    expect(group.signal.aborted).toBe(false);
    for (const name of [a, b, c])
      expect(await queueShape(other, name)).toEqual([[name === a ? 'read' : 'write', true]]);
    const reader = await other.tryAcquire(a, { mode: 'read' }); // shared with the group's read
    expect(reader).not.toBeNull();
    expect(await other.tryAcquire(b, { mode: 'read' })).toBeNull();
    await reader!.release();

    const first = group.release();
    expect(group.release()).toBe(first); // idempotent: one promise
    await first;
    expect([group.released, group.isHeld(), group.signal.aborted]).toEqual([true, false, false]);
    expect(thrownBy(() => group.assertHeld())).toBeInstanceOf(LockLostError);
    expect(await counts(other, [a, b, c])).toEqual([0, 0, 0]);
  });

  it('`await using` releases every lock', async () => {
    const [a, b] = [ctx.name('using-a'), ctx.name('using-b')];
    const [client, other] = await ctx.world.backends(2);
    {
      await using group = await acquireAll(client, [a, b]);
      expect(group.isHeld()).toBe(true);
      expect(await counts(other, [a, b])).toEqual([1, 1]);
    }
    expect(await counts(other, [a, b])).toEqual([0, 0]);
  });

  it('readers share: two clients hold the same names for read at once', async () => {
    const [a, b] = [ctx.name('readers-a'), ctx.name('readers-b')];
    const [one, two] = await ctx.world.backends(2);
    const list = [
      { name: a, mode: 'read' as const },
      { name: b, mode: 'read' as const },
    ];
    const [g1, g2] = await Promise.all([
      acquireAll(one, list, { timeoutMs: 0 }),
      acquireAll(two, [...list].reverse(), { timeoutMs: 0 }),
    ]);
    expect(await queueShape(one, a)).toEqual([
      ['read', true],
      ['read', true],
    ]);
    await Promise.all([g1.release(), g2.release()]);
  });

  it('while it waits, holds the locks before the one taken elsewhere and none after it', async () => {
    const [a, b, c] = [ctx.name('order-a'), ctx.name('order-b'), ctx.name('order-c')];
    const [client, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(b);
    const pending = track(acquireAll(client, [c, b, a], { timeoutMs: 15_000 }));
    await waitsWith(other, [a, b, c], [1, 2, 0]); // c given back before waiting: others may take it meanwhile
    expect(await queueShape(other, a)).toEqual([['write', true]]);
    expect(await queueShape(other, b)).toEqual([
      ['write', true],
      ['write', false],
    ]);
    const meanwhile = await other.tryAcquire(c);
    expect(meanwhile).not.toBeNull();
    await meanwhile!.release();
    expect(pending.granted()).toBe(false);

    await blocker.release();
    const group = await pending.result;
    expect(group.isHeld()).toBe(true);
    for (const name of [a, b, c]) expect(await queueShape(other, name)).toEqual([['write', true]]);
    expect(group.handles[1].fencingToken).toBeGreaterThan(blocker.fencingToken);
    await group.release();
  });

  it('one deadline: on timeout, rejects with LockTimeoutError naming the lock taken, holding nothing', async () => {
    const [a, b, c] = [ctx.name('timeout-a'), ctx.name('timeout-b'), ctx.name('timeout-c')];
    const [client, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(b);
    const started = performance.now();
    const error = await rejectionOf(acquireAll(client, [a, { name: b, mode: 'read' }, c], { timeoutMs: 150 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', lockName: b, mode: 'read', timeoutMs: 150 });
    expect(await counts(other, [a, c])).toEqual([0, 0]); // right after the rejection
    expect(await queueShape(other, b)).toEqual([['write', true]]);
    await blocker.release();
  });

  it('timeoutMs 0 fails at once with LockTimeoutError when one lock is taken, holding nothing', async () => {
    const [a, b, c] = [ctx.name('zero-a'), ctx.name('zero-b'), ctx.name('zero-c')];
    const [client, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(c);
    const error = await rejectionOf(acquireAll(client, [a, b, c], { timeoutMs: 0 }));
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', lockName: c, timeoutMs: 0 });
    expect(await counts(other, [a, b, c])).toEqual([0, 0, 1]);
    await blocker.release();
    await (await acquireAll(client, [a, b, c], { timeoutMs: 0 })).release(); // free: granted without waiting
  });

  it('an abort during the wait rejects with LockAbortedError, holding nothing; an aborted signal queues nothing', async () => {
    const [a, b, c] = [ctx.name('abort-a'), ctx.name('abort-b'), ctx.name('abort-c')];
    const [client, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(b);
    const controller = new AbortController();
    const waiting = rejectionOf(acquireAll(client, [a, b, c], { signal: controller.signal }));
    await waitsWith(other, [a, b, c], [1, 2, 0]);
    const reason = new Error('user gave up');
    controller.abort(reason);
    const error = await waiting;
    expect(error).toBeInstanceOf(LockAbortedError);
    expect(error).toMatchObject({ code: 'LOCK_ABORTED', lockName: b, cause: reason });
    expect(await counts(other, [a, b, c])).toEqual([0, 1, 0]);

    const early = await rejectionOf(acquireAll(client, [a, c], { signal: AbortSignal.abort(reason) }));
    expect(early).toMatchObject({ code: 'LOCK_ABORTED', lockName: a, cause: reason });
    expect(await counts(other, [a, c])).toEqual([0, 0]);
    await blocker.release();
  });

  it('callers listing the same names in opposite orders never deadlock and never overlap', async () => {
    const [a, b, c] = [ctx.name('cross-a'), ctx.name('cross-b'), ctx.name('cross-c')];
    const clients = await ctx.world.backends(3);
    const meter = new OverlapMeter();
    const orders: string[][] = [
      [a, b, c],
      [c, b, a],
      [b, c, a],
    ];
    const loop = async (client: LockBackend, order: string[]): Promise<void> => {
      for (let i = 0; i < 12; i++) {
        const group = await acquireAll(client, order, { timeoutMs: 20_000 });
        meter.enter('write');
        await sleep(1);
        meter.leave('write');
        await group.release();
      }
    };
    await Promise.all(clients.map((client, i) => loop(client, orders[i])));
    expect(meter.violations).toEqual([]);
  });

  it('the signal aborts with the LockLostError as soon as one lock is lost', async () => {
    const [a, b] = [ctx.name('lost-a'), ctx.name('lost-b')];
    const holder = await ctx.world.losable();
    const group = await acquireAll(holder, [a, b]);
    const heard: unknown[] = [];
    group.signal.addEventListener('abort', () => heard.push(group.signal.reason));
    await ctx.world.lose(holder, group.handles[1]);
    // The first lock to go decides the reason (ZooKeeper loses both at once: the session).
    const reasons = group.handles.map((handle) => handle.signal.reason as unknown).filter(Boolean);
    expect(heard).toHaveLength(1);
    expect(reasons).toContain(heard[0]);
    expect(group.signal.reason).toBeInstanceOf(LockLostError);
    expect(group.isHeld()).toBe(false);
    expect(thrownBy(() => group.assertHeld())).toBeInstanceOf(LockLostError);
    await group.release(); // releases what is left; the lost one is a no-op
    expect((await holder.contenders(a)).length + (await holder.contenders(b)).length).toBe(0);
  });

  it('a signal first read after the loss is already aborted', async () => {
    const [a, b] = [ctx.name('late-a'), ctx.name('late-b')];
    const holder = await ctx.world.losable();
    const group = await acquireAll(holder, [a, b]);
    await ctx.world.lose(holder, group.handles[0]);
    expect(group.signal.aborted).toBe(true);
    expect(group.signal.reason).toBeInstanceOf(LockLostError);
    await group.release();
  });

  it('cancelWaits fails a multi-lock wait with LockClientClosedError and gives back what it held', async () => {
    const [a, b, c] = [ctx.name('cancel-a'), ctx.name('cancel-b'), ctx.name('cancel-c')];
    const [client, other] = await ctx.world.backends(2);
    const blocker = await other.acquire(b);
    const waiting = rejectionOf(acquireAll(client, [a, b, c]));
    await waitsWith(other, [a, b, c], [1, 2, 0]);
    await client.cancelWaits();
    expect(await waiting).toBeInstanceOf(LockClientClosedError);
    expect(await counts(other, [a, b, c])).toEqual([0, 1, 0]);
    await blocker.release();
  });

  describe('bad input: typed errors naming the problem, nothing queued', () => {
    const BAD: Array<[string, unknown, unknown, new (...args: never[]) => Error, RegExp]> = [
      ['an empty list', [], undefined, InvalidLockListError, /it is empty/],
      [
        'more than 1,000 names',
        Array.from({ length: 1001 }, (_, i) => `n${i}`),
        undefined,
        InvalidLockListError,
        /over the limit of 1000/,
      ],
      ['a list that is not an array', 'a', undefined, InvalidLockListError, /expected an array/],
      ['an entry that is neither a name nor { name, mode }', [42], undefined, InvalidLockListError, /entry 0 is 42/],
      ['an entry with an unknown key', [{ name: 'x', mod: 'read' }], undefined, InvalidLockListError, /"mod"/],
      ['a bad name', ['ok', ''], undefined, InvalidLockNameError, /Invalid lock name ""/],
      ['a bad mode', [{ name: 'x', mode: 'exclusive' }], undefined, InvalidOptionError, /locks\[0\]\.mode="exclusive"/],
      ['an unknown option', ['x'], { timeout: 100 }, InvalidOptionError, /no option "timeout"/],
      ['a mode among the options', ['x'], { mode: 'read' }, InvalidOptionError, /give each lock its mode in the list/],
      ['a bad timeout', ['x'], { timeoutMs: -1 }, InvalidOptionError, /timeoutMs=-1/],
    ];
    it.each(BAD)('rejects %s', async (_, locks, options, type, message) => {
      const name = ctx.name('bad');
      const [client] = await ctx.world.backends(1);
      const list = Array.isArray(locks) && locks.length > 0 && locks.length < 5 ? [...locks, name] : locks;
      for (const call of [
        () => acquireAll(client, list as LockList, options as MultiAcquireOptions),
        () =>
          new ReentrantLocker(client, Infinity).withLocks(
            list as LockList,
            () => 'ran',
            options as MultiAcquireOptions,
          ),
      ]) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(type);
        expect((error as Error).message).toMatch(message);
      }
      expect(await client.contenders(name)).toEqual([]);
    });
  });

  describe('ReentrantLocker: acquireAll and withLocks', () => multiLockReentrantCases(ctx));
}
