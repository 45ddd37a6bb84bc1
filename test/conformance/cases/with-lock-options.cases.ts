import {
  InvalidOptionError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ReentrantLocker,
  type LockBackend,
  type LockLostEvent,
  type LockSkippedEvent,
} from '../../../lib/index';
import { jobRecordName, readJobState } from '../../../lib/core/port/job-record';
import { waitUntil } from '../../support/wait-until';
import { queued, queueShape, rejectionOf, track, turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

/** Short, so that the whole suite stays quick on ZooKeeper; long enough to look inside. */
const HOLD_AT_LEAST_MS = 300;

const BAD_OPTIONS: Array<[string, unknown, string]> = [
  ['an unknown ifLocked', { ifLocked: 'later' }, 'ifLocked'],
  ['a negative holdAtLeastMs', { holdAtLeastMs: -1 }, 'holdAtLeastMs'],
  ['a string holdAtLeastMs', { holdAtLeastMs: '500' }, 'holdAtLeastMs'],
  ['an infinite holdAtLeastMs', { holdAtLeastMs: Infinity }, 'holdAtLeastMs'],
  ['a NaN holdAtLeastMs', { holdAtLeastMs: NaN }, 'holdAtLeastMs'],
  ['an unknown onLockLost', { onLockLost: 'retry' }, 'onLockLost'],
];

/** A `ReentrantLocker` over `backend`, and every event it reported. */
function recordingLocker(backend: LockBackend, defaultTimeoutMs = 10_000) {
  const skipped: LockSkippedEvent[] = [];
  const lost: LockLostEvent[] = [];
  const locker = new ReentrantLocker(backend, defaultTimeoutMs, {
    skipped: (e) => skipped.push(e),
    lost: (e) => lost.push(e),
  });
  return { locker, skipped, lost };
}

export function withLockOptionsCases(ctx: ConformanceContext): void {
  /** A locker on a client of its own, and another client holding `name`. */
  const heldElsewhere = async (name: string, defaultTimeoutMs?: number) => {
    const [mine, other] = await ctx.world.backends(2);
    return { ...recordingLocker(mine, defaultTimeoutMs), other, held: await other.acquire(name) };
  };

  it("ifLocked 'skip': held elsewhere, resolves undefined at once without running the body, reports 'held', queues nothing", async () => {
    const name = ctx.name('skip-held');
    const { locker, skipped, other, held } = await heldElsewhere(name);
    let ran = false;
    await expect(locker.withLock(name, () => (ran = true), { ifLocked: 'skip' })).resolves.toBeUndefined();
    await expect(
      locker.withLock(name, () => (ran = true), { ifLocked: 'skip', mode: 'read' }),
    ).resolves.toBeUndefined();
    expect(ran).toBe(false);
    expect(skipped).toEqual([
      { name, mode: 'write', reason: 'held' },
      { name, mode: 'read', reason: 'held' },
    ]);
    expect(await queueShape(other, name)).toEqual([['write', true]]);
    await held.release();
    await ctx.world.releasesConfirmed(); // the release resolves once sent; the other connection looks after
    await expect(locker.withLock(name, () => 'ran', { ifLocked: 'skip' })).resolves.toBe('ran'); // free: it runs
    expect(skipped).toHaveLength(2);
  });

  it("ifLocked 'skip' with timeoutMs waits that long: runs if the lock comes free, else skips with reason 'timeout'", async () => {
    const name = ctx.name('skip-timeout');
    const { locker, skipped, other, held } = await heldElsewhere(name);
    const started = performance.now();
    await expect(locker.withLock(name, () => 'ran', { ifLocked: 'skip', timeoutMs: 100 })).resolves.toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(95); // timers may fire a millisecond early
    expect(skipped).toEqual([{ name, mode: 'write', reason: 'timeout' }]);
    expect(await queueShape(other, name)).toEqual([['write', true]]);

    const waiting = locker.withLock(name, () => 'ran after the wait', { ifLocked: 'skip', timeoutMs: 10_000 });
    await queued(other, name, 2);
    await held.release();
    await expect(waiting).resolves.toBe('ran after the wait');
    expect(skipped).toHaveLength(1);
  });

  it("ifLocked 'skip' after cancelWaits(): a waiting call and new ones resolve undefined with reason 'closing'", async () => {
    const name = ctx.name('skip-closing');
    const { locker, skipped, other, held } = await heldElsewhere(name);
    let ran = false;
    const waiting = locker.withLock(name, () => (ran = true), { ifLocked: 'skip', timeoutMs: 10_000 });
    await queued(other, name, 2);
    await locker.cancelWaits();
    await expect(waiting).resolves.toBeUndefined();
    await expect(
      locker.withLock(name, () => (ran = true), { ifLocked: 'skip', timeoutMs: 10_000 }),
    ).resolves.toBeUndefined();
    expect(ran).toBe(false);
    expect(skipped).toEqual([
      { name, mode: 'write', reason: 'closing' },
      { name, mode: 'write', reason: 'closing' },
    ]);
    expect(await queueShape(other, name)).toEqual([['write', true]]);
    await held.release();
  });

  it("a waiting 'wait' call cut by cancelWaits() fails with LockClientClosedError saying the client is shutting down", async () => {
    const name = ctx.name('wait-closing');
    const { locker, skipped, other, held } = await heldElsewhere(name);
    const waiting = rejectionOf(locker.withLock(name, () => 'ran'));
    await queued(other, name, 2);
    await locker.cancelWaits();
    const error = await waiting;
    expect(error).toBeInstanceOf(LockClientClosedError);
    expect((error as Error).message).toContain(`"${name}"`);
    expect((error as Error).message).toMatch(/shutting down/);
    expect(skipped).toEqual([]);
    expect(await queueShape(other, name)).toEqual([['write', true]]);
    await held.release();
  });

  it("ifLocked 'throw' fails at once with LockTimeoutError; 'wait' (the default) waits the locker's default timeout", async () => {
    const name = ctx.name('throw-wait');
    const { locker, other, held } = await heldElsewhere(name, 150);
    const thrown = await rejectionOf(locker.withLock(name, () => 'ran', { ifLocked: 'throw' }));
    expect(thrown).toBeInstanceOf(LockTimeoutError);
    expect(thrown).toMatchObject({ lockName: name, mode: 'write', timeoutMs: 0 });
    const timedOut = await rejectionOf(locker.withLock(name, () => 'ran', { ifLocked: 'wait' }));
    expect(timedOut).toMatchObject({ name: 'LockTimeoutError', lockName: name, timeoutMs: 150 });
    expect(await queueShape(other, name)).toEqual([['write', true]]);

    const waiting = track(locker.withLock(name, () => 'waited', { timeoutMs: 10_000 }));
    await queued(other, name, 2);
    await turns();
    expect(waiting.granted()).toBe(false);
    await held.release();
    await expect(waiting.result).resolves.toBe('waited');
  });

  it('holdAtLeastMs: the call resolves at once and its node goes; the hold is kept in the backend and the job record, every call of the name skips or waits until it ends, a job call then runs and drops it', async () => {
    const name = ctx.name('hold-at-least');
    const [mine, other] = await ctx.world.backends(2);
    const { locker } = recordingLocker(mine);
    const late = recordingLocker(other);
    const startedAt = performance.now();
    const result = await locker.withLock(name, () => 'fast job', { holdAtLeastMs: HOLD_AT_LEAST_MS });
    expect(result).toBe('fast job');
    expect(performance.now() - startedAt).toBeLessThan(HOLD_AT_LEAST_MS); // did not wait for the minimum hold

    expect(await other.contenders(name)).toEqual([]); // nothing held in a process: the backend keeps the hold
    const kept = readJobState(await other.readRecord(jobRecordName(name)));
    expect(kept.holdUntil).not.toBeNull();
    expect(kept.runs).toEqual([
      {
        id: expect.any(String),
        by: expect.any(String),
        identity: expect.any(String),
        startedAt: expect.any(Number),
        endedAt: expect.any(Number),
        outcome: 'ok',
      },
    ]);
    const tick = { ifLocked: 'skip', holdAtLeastMs: HOLD_AT_LEAST_MS } as const;
    await expect(late.locker.withLock(name, () => 'late tick', tick)).resolves.toBeUndefined();
    expect(late.skipped).toEqual([{ name, mode: 'write', reason: 'held' }]);
    expect(await other.contenders(name)).toEqual([]); // the skip gave its grant back
    // Every call of the name honours the kept hold, job or not: a plain try is refused, a plain wait waits it out.
    await expect(late.locker.withLock(name, () => 'plain call', { ifLocked: 'skip' })).resolves.toBeUndefined();
    expect(await other.tryAcquire(name)).toBeNull();
    expect(await other.tryAcquire(name, { mode: 'read' })).toBeNull();
    const plainAt = await late.locker.withLock(name, () => performance.now(), { timeoutMs: 10_000 });
    expect(plainAt - startedAt).toBeGreaterThanOrEqual(HOLD_AT_LEAST_MS);

    // A waiting job call (a maxHoldMs of its own makes one too) starts once the hold is over, and drops it.
    const after = await late.locker.withLock(name, () => performance.now(), { maxHoldMs: 10_000, timeoutMs: 10_000 });
    expect(after - startedAt).toBeGreaterThanOrEqual(HOLD_AT_LEAST_MS);
    const next = readJobState(await other.readRecord(jobRecordName(name)));
    expect(next.holdUntil).toBeNull();
    expect(next.runs).toHaveLength(2);
    expect(next.runs[1]).toEqual(kept.runs[0]);
  });

  it('a hold outlives drain() and close(): a waiting job call whose deadline comes first fails at once, one cut short by its signal or by shutdown leaves no node', async () => {
    const name = ctx.name('hold-kept');
    const [mine, other, third] = await ctx.world.backends(3);
    const { locker } = recordingLocker(mine);
    await locker.withLock(name, () => 'done', { holdAtLeastMs: 60_000 });
    await expect(locker.drain(1_000)).resolves.toBe(true);
    await mine.close();
    const late = recordingLocker(other);
    const job = { holdAtLeastMs: 60_000 } as const;
    const timedOut = await rejectionOf(late.locker.withLock(name, () => 'ran', { ...job, timeoutMs: 1_000 }));
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    const aborts = new AbortController();
    const aborted = late.locker.withLock(name, () => 'ran', { ...job, timeoutMs: Infinity, signal: aborts.signal });
    await waitUntil(async () => (await third.contenders(name)).length === 1, 'the waiter queued, waiting out the hold');
    aborts.abort();
    expect(await rejectionOf(aborted)).toBeInstanceOf(LockAbortedError);
    const closing = late.locker.withLock(name, () => 'ran', { ...job, timeoutMs: Infinity });
    await waitUntil(async () => (await third.contenders(name)).length === 1, 'the waiter queued, waiting out the hold');
    await late.locker.cancelWaits();
    expect(await rejectionOf(closing)).toBeInstanceOf(LockClientClosedError);
    expect(await third.contenders(name)).toEqual([]);
  });

  it("locks() shows a job's last run (who, when, how it ended) and its kept hold, idle or held; names without a record show none", async () => {
    const [job, plain] = [ctx.name('job-listed'), ctx.name('job-listed-plain')];
    const [mine, other] = await ctx.world.backends(2);
    const { locker } = recordingLocker(mine);
    const before = Date.now();
    await locker.withLock(job, () => 'ran', { holdAtLeastMs: 60_000 });
    const failing = locker.withLock(job, () => Promise.reject(new Error('job failed')), { maxHoldMs: 60_000 });
    // The hold is kept: a job call waiting past it would time out, so the failing run never started.
    expect(await rejectionOf(failing)).toBeInstanceOf(LockTimeoutError);
    await locker.withLock(plain, () => 'ran');
    const held = await other.acquire(plain);

    const listed = await other.locks(job);
    expect(listed).toEqual([
      {
        kind: 'lock',
        name: job,
        holders: [],
        waiters: [],
        lastRun: {
          by: expect.stringMatching(/:\d+$/),
          identity: expect.any(String),
          startedAt: expect.any(Date),
          endedAt: expect.any(Date),
          outcome: 'ok',
        },
        keptUntil: expect.any(Date),
      },
    ]);
    const [{ lastRun, keptUntil }] = listed as Array<{ lastRun: { startedAt: Date; endedAt: Date }; keptUntil: Date }>;
    expect(lastRun.startedAt.getTime()).toBeLessThanOrEqual(lastRun.endedAt.getTime());
    // Same machine, same clock as the backend's: within the test's own span.
    expect(lastRun.startedAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(keptUntil.getTime() - lastRun.startedAt.getTime()).toBeGreaterThanOrEqual(60_000);
    const [plainListing] = await other.locks(plain);
    expect(plainListing).not.toHaveProperty('lastRun');
    expect(plainListing.holders).toHaveLength(1);
    await held.release();
  });

  it("a job's runs end as ok, error, lost or max-hold in its record, newest first", async () => {
    const name = ctx.name('job-outcomes');
    const holder = await ctx.world.losable();
    const [observer] = await ctx.world.backends(1);
    const { locker } = recordingLocker(holder);
    const job = { maxHoldMs: 60_000 } as const;
    await locker.withLock(name, () => 'ran', job);
    await rejectionOf(locker.withLock(name, () => Promise.reject(new Error('job failed')), job));
    await rejectionOf(locker.withLock(name, (handle) => ctx.world.lose(holder, handle), job));
    await waitUntil(
      async () => readJobState(await observer.readRecord(jobRecordName(name))).runs.length === 3,
      'the lost run recorded',
    );
    const timedOut = locker.withLock(name, () => new Promise((resolve) => setTimeout(resolve, 400)), {
      maxHoldMs: 100,
    });
    expect(await rejectionOf(timedOut)).toBeInstanceOf(LockLostError);
    const { runs, holdUntil } = readJobState(await observer.readRecord(jobRecordName(name)));
    expect(runs.map((run) => run.outcome)).toEqual(['max-hold', 'lost', 'error', 'ok']);
    expect(holdUntil).toBeNull();
  });

  it("onLockLost 'reject' (default): rejects with the LockLostError once the body settled, and reports the loss once", async () => {
    const name = ctx.name('lost-reject');
    const holder = await ctx.world.losable();
    const { locker, lost } = recordingLocker(holder);
    const steps: string[] = [];
    const error = await rejectionOf(
      locker
        .withLock(name, async (handle) => {
          await ctx.world.lose(holder, handle);
          await turns(); // the body goes on after the loss; the call waits for it
          steps.push('body returned');
          return 'done, but not under the lock';
        })
        .finally(() => steps.push('call settled')),
    );
    expect(steps).toEqual(['body returned', 'call settled']);
    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ code: 'LOCK_LOST', lockName: name });
    expect(lost).toEqual([{ name, mode: 'write', heldMs: expect.any(Number), error, ignored: false }]);
    expect(lost[0].heldMs).toBeGreaterThanOrEqual(0);
  });

  it("onLockLost 'ignore': returns the body's result, and reports the loss once as ignored", async () => {
    const name = ctx.name('lost-ignore');
    const holder = await ctx.world.losable();
    const { locker, lost } = recordingLocker(holder);
    const result = await locker.withLock(
      name,
      async (handle) => {
        await ctx.world.lose(holder, handle);
        return 'kept';
      },
      { onLockLost: 'ignore' },
    );
    expect(result).toBe('kept');
    expect(lost).toEqual([
      { name, mode: 'write', heldMs: expect.any(Number), error: expect.any(LockLostError), ignored: true },
    ]);
    expect(lost[0].error).toMatchObject({ lockName: name });
  });

  it.each(BAD_OPTIONS)(
    'rejects %s with InvalidOptionError naming it, without running the body or queueing',
    async (_, options, option) => {
      const name = ctx.name('bad-with-lock-option');
      const { locker, other, held } = await heldElsewhere(name, 1_000);
      let ran = false;
      const error = await rejectionOf(locker.withLock(name, () => (ran = true), options as never));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ code: 'INVALID_OPTION', option });
      expect((error as Error).message).toContain(option);
      expect(ran).toBe(false);
      expect(await queueShape(other, name)).toEqual([['write', true]]);
      await held.release();
    },
  );
}
