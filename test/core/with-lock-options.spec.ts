import { setTimeout as sleep } from 'node:timers/promises';

import {
  InvalidOptionError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ReentrantLocker,
  type LockLostEvent,
  type LockSkippedEvent,
} from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { KEPT_HOLD_MARKER, withoutMarkers } from '../support/node-names';
import { waitUntil } from '../support/wait-until';

/** `withLock`'s answers to a taken lock (`ifLocked`), `holdAtLeastMs`, and a lock lost under the body (`onLockLost`). */
describe('withLock: ifLocked, holdAtLeastMs, onLockLost', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('with-lock-options')));
  afterAll(() => fx.cleanup());

  /** A locker over a client of its own, recording what it reports. */
  const lockerOn = async (defaultTimeoutMs = 10_000) => {
    const backend = await fx.backend();
    const skipped: LockSkippedEvent[] = [];
    const lost: LockLostEvent[] = [];
    const locker = new ReentrantLocker(backend, defaultTimeoutMs, {
      skipped: (e) => skipped.push(e),
      lost: (e) => lost.push(e),
    });
    return { backend, locker, skipped, lost };
  };

  it("ifLocked 'skip': a taken lock resolves undefined without running the body, at once, and leaves only the holder's node", async () => {
    const { locker, skipped } = await lockerOn();
    const [other] = await fx.many(1);
    const held = await other.acquire('skip-1');
    let ran = false;
    const result = await locker.withLock('skip-1', () => (ran = true), { ifLocked: 'skip' });
    expect(result).toBeUndefined();
    expect(ran).toBe(false);
    expect(skipped).toEqual([{ name: 'skip-1', mode: 'write', reason: 'held' }]);
    expect(await fx.nodes('skip-1')).toEqual([nodeOf(held)]);
    await held.release();
    // Free now: the body runs and its result comes back.
    await expect(locker.withLock('skip-1', () => 'ran', { ifLocked: 'skip' })).resolves.toBe('ran');
    expect(await fx.nodes('skip-1')).toBeNull();
  });

  it("ifLocked 'skip' with timeoutMs waits that long first, and skips with reason 'timeout'", async () => {
    const { locker, skipped } = await lockerOn();
    const [other] = await fx.many(1);
    const held = await other.acquire('skip-2');
    const releaseSoon = sleep(100).then(() => held.release());
    await expect(locker.withLock('skip-2', () => 'got it', { ifLocked: 'skip', timeoutMs: 5_000 })).resolves.toBe(
      'got it',
    );
    await releaseSoon;
    const again = await other.acquire('skip-2');
    await expect(
      locker.withLock('skip-2', () => 'got it', { ifLocked: 'skip', timeoutMs: 50 }),
    ).resolves.toBeUndefined();
    expect(skipped).toEqual([{ name: 'skip-2', mode: 'write', reason: 'timeout' }]);
    expect(await fx.nodes('skip-2')).toEqual([nodeOf(again)]);
    await again.release();
  });

  it("ifLocked 'throw' fails at once with LockTimeoutError (timeoutMs 0), 'wait' waits the default", async () => {
    const { locker } = await lockerOn(5_000);
    const [other] = await fx.many(1);
    const held = await other.acquire('throw-1');
    const error = await locker.withLock('throw-1', () => 'ran', { ifLocked: 'throw' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ lockName: 'throw-1', timeoutMs: 0 });
    const waiting = locker.withLock('throw-1', () => 'waited', { ifLocked: 'wait' });
    await fx.queued('throw-1', 2);
    await held.release();
    await expect(waiting).resolves.toBe('waited');
  });

  it('holdAtLeastMs: the node goes when the body returns, the hold is kept in ZooKeeper (a marker, the job record); job calls skip until it ends', async () => {
    const a = await lockerOn();
    const b = await lockerOn();
    const grantedAt = Date.now();
    const tick = { ifLocked: 'skip', holdAtLeastMs: 600 } as const;
    await expect(a.locker.withLock('min-1', () => 'fast job', tick)).resolves.toBe('fast job');
    expect(Date.now() - grantedAt).toBeLessThan(600); // the call did not wait for the minimum hold
    const [marker, ...lockNodes] = (await fx.nodes('min-1')) ?? [];
    expect([marker, lockNodes]).toEqual([expect.stringMatching(KEPT_HOLD_MARKER), []]); // the kept hold's marker only
    const record = JSON.parse((await fx.inspector.data(`${fx.rootPath}-records/job%2Fmin-1`))!) as unknown;
    expect(record).toEqual({
      hold: { afterWriteMs: expect.any(Number) },
      runs: [
        {
          id: expect.any(String),
          by: expect.any(String),
          identity: expect.any(String),
          outcome: 'ok',
          tookMs: expect.any(Number),
        },
      ],
    });
    // A late timer on another instance (or this one) finds the lock still taken.
    await expect(b.locker.withLock('min-1', () => 'late tick', tick)).resolves.toBeUndefined();
    await expect(a.locker.withLock('min-1', () => 'late tick', tick)).resolves.toBeUndefined();
    expect(b.skipped).toEqual([{ name: 'min-1', mode: 'write', reason: 'held' }]);
    expect(await fx.nodes('min-1')).toEqual([marker]); // the skips gave their grants back
    let ran: number | undefined;
    await waitUntil(
      async () => (ran = await b.locker.withLock('min-1', () => Date.now(), tick)) !== undefined,
      'the next tick',
    );
    expect(ran! - grantedAt).toBeGreaterThanOrEqual(600);
  });

  it('a body longer than holdAtLeastMs releases when it ends', async () => {
    const { locker } = await lockerOn();
    await locker.withLock('min-2', () => sleep(150), { holdAtLeastMs: 50 });
    expect(await fx.nodes('min-2')).toBeNull();
  });

  it('drain() (shutdown) leaves the hold to ZooKeeper: no lock node, no timer in the locker, and the hold still keeps job calls out', async () => {
    const { locker } = await lockerOn();
    await locker.withLock('min-3', () => 'done', { holdAtLeastMs: 60_000 });
    await expect(locker.drain(1_000)).resolves.toBe(true);
    expect(withoutMarkers(await fx.nodes('min-3'))).toEqual([]); // no lock node: the kept hold's marker
    expect(await fx.inspector.data(`${fx.rootPath}-records/job%2Fmin-3`)).toContain('"afterWriteMs"');
    const other = await lockerOn();
    await expect(
      other.locker.withLock('min-3', () => 'ran', { ifLocked: 'skip', holdAtLeastMs: 1 }),
    ).resolves.toBeUndefined();
  });

  it("onLockLost: a lost lock rejects with LockLostError after the body settles and is reported once; 'ignore' keeps the result", async () => {
    const backend = await fx.expirable();
    const lost: LockLostEvent[] = [];
    const locker = new ReentrantLocker(backend, 10_000, { lost: (e) => lost.push(e) });
    let bodyEnded = false;
    const rejecting = locker.withLock('lost-1', async (handle) => {
      await fx.expire(backend);
      await waitUntil(() => handle.signal.aborted, 'the signal aborts');
      bodyEnded = true;
      return 'reported success';
    });
    const error = await rejecting.catch((e: unknown) => e);
    expect(bodyEnded).toBe(true);
    expect(error).toBeInstanceOf(LockLostError);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ name: 'lost-1', mode: 'write', ignored: false });
    expect(lost[0].error).toBe(error);
    expect(lost[0].heldMs).toBeGreaterThanOrEqual(0);

    const ignoring = locker.withLock(
      'lost-2',
      async (handle) => {
        await fx.expire(backend);
        await waitUntil(() => handle.signal.aborted, 'the signal aborts');
        return 'kept';
      },
      { onLockLost: 'ignore' },
    );
    await expect(ignoring).resolves.toBe('kept');
    expect(lost).toHaveLength(2);
    expect(lost[1]).toMatchObject({ name: 'lost-2', ignored: true });
    await waitUntil(async () => ((await fx.nodes('lost-2')) ?? []).length === 0, 'the expired session took its node');
  });

  it("shutdown: a waiting 'skip' call resolves quietly, a waiting 'wait' call fails saying the client is shutting down; new calls too", async () => {
    const { locker, skipped } = await lockerOn();
    const [other] = await fx.many(1);
    const held = await other.acquire('closing-1');
    const skipping = locker.withLock('closing-1', () => 'ran', { ifLocked: 'skip', timeoutMs: 10_000 });
    const waiting = locker.withLock('closing-1', () => 'ran').catch((e: unknown) => e);
    await fx.queued('closing-1', 3);
    await locker.cancelWaits();
    await expect(skipping).resolves.toBeUndefined();
    const error = await waiting;
    expect(error).toBeInstanceOf(LockClientClosedError);
    expect((error as Error).message).toMatch(/"closing-1".*shutting down/);
    await expect(locker.withLock('closing-1', () => 'ran', { ifLocked: 'skip' })).resolves.toBeUndefined();
    expect(skipped.map((e) => e.reason)).toEqual(['closing', 'closing']);
    expect(await fx.nodes('closing-1')).toEqual([nodeOf(held)]);
    await held.release();
  });

  it.each([
    [{ ifLocked: 'later' }, 'ifLocked'],
    [{ holdAtLeastMs: -1 }, 'holdAtLeastMs'],
    [{ holdAtLeastMs: '500' }, 'holdAtLeastMs'],
    [{ holdAtLeastMs: Infinity }, 'holdAtLeastMs'],
    [{ onLockLost: 'retry' }, 'onLockLost'],
    [{ ifLocked: null }, 'ifLocked'],
  ])('bad input %j: InvalidOptionError naming %s, and nothing sent', async (options, option) => {
    const { backend, locker } = await lockerOn();
    const before = backend.client.counter.snapshot().create ?? 0;
    const error = await locker.withLock('bad-input', () => 'ran', options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).toContain(option);
    expect(backend.client.counter.snapshot().create ?? 0).toBe(before);
    // Options are checked before the name, as the backends do.
    await expect(locker.withLock('', () => 'ran', options as never)).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
