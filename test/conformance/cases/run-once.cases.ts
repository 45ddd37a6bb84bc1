import { InvalidOptionError, LockLostError, LockTimeoutError, runOnce, type LockBackend } from '../../../lib/index';
import { runOnceRecordName } from '../../../lib/core/run-once/run-once';
import { waitUntil } from '../../support/wait-until';
import { queued, rejectionOf, track, turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

/** A step that runs until `finish()` (or, for the run under way, `fail()`); `running` resolves when it first starts. */
function gatedStep() {
  let started!: () => void;
  let fail: ((error: Error) => void) | undefined;
  const finishes: Array<() => void> = [];
  const running = new Promise<void>((resolve) => (started = resolve));
  const step = {
    runs: 0,
    ended: false,
    running,
    finish: () => {
      step.ended = true;
      for (const finish of finishes.splice(0)) finish();
    },
    fail: (error: Error) => fail?.(error),
    fn: (): Promise<void> => {
      step.runs++;
      started();
      if (step.ended) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        finishes.push(resolve);
        fail = reject;
      });
    },
  };
  return step;
}

export function runOnceCases(ctx: ConformanceContext): void {
  it('concurrent callers: exactly one runs it, and every caller resolves only after it completed', async () => {
    const key = ctx.name('once');
    const backends = await ctx.world.backends(4);
    const step = gatedStep();
    const endedWhenResolved: boolean[] = [];
    const call = (backend: LockBackend) =>
      track(runOnce(backend, key, step.fn, { by: 'test' }).then((ran) => (endedWhenResolved.push(step.ended), ran)));
    const calls = backends.slice(0, 3).map(call);
    await step.running;
    await queued(backends[3], key, 3);
    // A caller arriving mid-run finds no record yet: it waits too.
    const late = call(backends[3]);
    await queued(backends[3], key, 4);
    expect(await backends[3].readRecord(runOnceRecordName(key))).toBeNull();
    await turns();
    expect([...calls, late].some((c) => c.granted())).toBe(false);

    step.finish();
    const results = await Promise.all([...calls, late].map((c) => c.result));
    expect(results.filter(Boolean)).toEqual([true]);
    expect(step.runs).toBe(1);
    expect(endedWhenResolved).toEqual([true, true, true, true]);
    const record = await backends[0].readRecord(runOnceRecordName(key));
    expect(record?.data).toEqual({
      by: 'test',
      startedAt: expect.any(String),
      endedAt: expect.any(String),
      durationMs: expect.any(Number),
      outcome: 'done',
      runId: expect.any(String),
    });
  });

  it('a later caller resolves false at once from the record, without the lock and without running it', async () => {
    const key = ctx.name('once-later');
    const [a, b] = await ctx.world.backends(2);
    expect(await runOnce(a, key, () => undefined)).toBe(true);
    const blocker = await a.acquire(key); // the lock is taken: only the record can answer
    const fn = jest.fn();
    expect(await runOnce(b, key, fn, { timeoutMs: 0 })).toBe(false);
    expect(fn).not.toHaveBeenCalled();
    await blocker.release();
    // Without a record, the same call would have needed the lock.
    const other = ctx.name('once-unrun');
    const held = await a.acquire(other);
    expect(await rejectionOf(runOnce(b, other, fn, { timeoutMs: 0 }))).toBeInstanceOf(LockTimeoutError);
    await held.release();
  });

  it('a step that throws rejects its runner with its error, records nothing, and the next waiter runs it', async () => {
    const key = ctx.name('once-throws');
    const [a, b, c] = await ctx.world.backends(3);
    const step = gatedStep();
    const runner = rejectionOf(runOnce(a, key, step.fn));
    await step.running;
    const waiter = track(runOnce(b, key, step.fn));
    await queued(c, key, 2);
    const boom = new Error('migration failed');
    step.fail(boom);
    expect(await runner).toBe(boom);
    await waitForRuns(step, 2);
    expect(await c.readRecord(runOnceRecordName(key))).toBeNull();
    step.finish();
    expect(await waiter.result).toBe(true);
    expect(await runOnce(c, key, step.fn)).toBe(false);
    expect(step.runs).toBe(2);
  });

  it('a runner that loses its lock mid-run: a waiter runs it; the runner rejects with LockLostError and records nothing', async () => {
    const key = ctx.name('once-lost');
    const losable = await ctx.world.losable();
    const [b] = await ctx.world.backends(1);
    const [first, second] = [gatedStep(), gatedStep()];
    let signal: AbortSignal | undefined;
    const runner = rejectionOf(runOnce(losable, key, (s) => ((signal = s), first.fn())));
    await first.running;
    const waiter = track(runOnce(b, key, second.fn));
    await queued(b, key, 2);
    await ctx.world.lose(losable, { name: key, signal: signal! });
    await second.running;
    expect(await b.readRecord(runOnceRecordName(key))).toBeNull();
    second.finish();
    expect(await waiter.result).toBe(true);
    first.finish(); // the lost runner's step returns late: it must not claim the run
    expect(await runner).toBeInstanceOf(LockLostError);
    expect((await b.readRecord(runOnceRecordName(key)))?.data).toMatchObject({ outcome: 'done' });
    expect(await runOnce(b, key, second.fn)).toBe(false);
    expect([first.runs, second.runs]).toEqual([1, 1]);
  });

  it('a completion recorded by another while the step ran: the runner resolves false and leaves that record', async () => {
    const key = ctx.name('once-recorded');
    const [a, b] = await ctx.world.backends(2);
    const step = gatedStep();
    const runner = track(runOnce(a, key, step.fn, { by: 'a' }));
    await step.running;
    const theirs = { by: 'b', outcome: 'done' };
    expect(await b.writeRecord(runOnceRecordName(key), theirs, { expectedVersion: null })).toBe(true);
    step.finish();
    expect(await runner.result).toBe(false);
    expect((await b.readRecord(runOnceRecordName(key)))?.data).toEqual(theirs);
  });

  it('writeRecord whileHolding: written while the lock is held; refused with LockLostError once it is not, writing nothing', async () => {
    const name = ctx.name('record-held');
    const [a, b] = await ctx.world.backends(2);
    const lock = await a.acquire(name);
    expect(await a.writeRecord(name, { n: 1 }, { whileHolding: lock })).toBe(true);
    expect(await a.writeRecord(name, { n: 2 }, { expectedVersion: null, whileHolding: lock })).toBe(false);
    await lock.release();
    for (const options of [{}, { expectedVersion: 0 }, { expectedVersion: null }]) {
      const write = a.writeRecord(name, { n: 3 }, { ...options, whileHolding: lock });
      expect(await rejectionOf(write)).toBeInstanceOf(LockLostError);
    }
    expect((await b.readRecord(name))?.data).toEqual({ n: 1 });
    const notAHandle = { whileHolding: { name } as never };
    expect(await rejectionOf(a.writeRecord(name, { n: 4 }, notAHandle))).toBeInstanceOf(InvalidOptionError);
    expect((await b.readRecord(name))?.data).toEqual({ n: 1 });
  });

  it('records: a version-checked write, a copy on read, and bad input refused before anything is written', async () => {
    const name = ctx.name('record');
    const [a, b] = await ctx.world.backends(2);
    expect(await a.readRecord(name)).toBeNull();
    expect(await a.writeRecord(name, { n: 1 }, { expectedVersion: null })).toBe(true);
    expect(await b.writeRecord(name, { n: 2 }, { expectedVersion: null })).toBe(false);
    const read = await b.readRecord(name);
    expect(read?.data).toEqual({ n: 1 });
    expect(await b.writeRecord(name, { n: 3 }, { expectedVersion: read!.version + 1 })).toBe(false);
    expect(await b.writeRecord(name, { n: 3 }, { expectedVersion: read!.version })).toBe(true);
    expect(await a.writeRecord(name, { n: 4 }, { expectedVersion: read!.version })).toBe(false);
    expect(await a.writeRecord(name, { n: 5 })).toBe(true);
    expect((await a.readRecord(name))?.data).toEqual({ n: 5 });
    for (const bad of [[1], 'text', null, { big: 'x'.repeat(20_000) }]) {
      expect(await rejectionOf(a.writeRecord(name, bad as never))).toBeInstanceOf(InvalidOptionError);
    }
    expect(await rejectionOf(a.writeRecord(name, {}, { expectedVersion: -2 }))).toBeInstanceOf(InvalidOptionError);
    expect(await rejectionOf(runOnce(a, name, 'not a function' as never))).toBeInstanceOf(InvalidOptionError);
    expect((await a.readRecord(name))?.data).toEqual({ n: 5 });
    // A record is not a lock: the name's queue is empty, and the lock is free.
    expect(await a.contenders(name)).toEqual([]);
    expect(await a.locks(name)).toEqual([]);
    await (await b.acquire(name, { timeoutMs: 0 })).release();
  });
}

function waitForRuns(step: { runs: number }, runs: number): Promise<void> {
  return waitUntil(() => step.runs >= runs, `${runs} runs of the step`);
}
