import { InMemoryLockBackend } from '../memory/in-memory-lock-backend.js';
import { InMemoryLockStore } from '../memory/in-memory-lock-store.js';
import { jobRecordName, readJobState } from '../port/job-record.js';
import type { LockBackend, RecordData, StoredRecord, WriteRecordOptions } from '../port/lock-backend.js';
import { ReentrantLocker } from './reentrant-locker.js';

/** On the fake clock (node:timers/promises keeps real time). */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How far the backend's clock runs ahead of (or, negative, behind) the instances' clock. */
let SERVER_OFFSET_MS = 0;
/** A write travels this long to the server before it is stamped, and its answer this long back. */
const REQUEST_MS = 40;
const ANSWER_MS = 60;
const HOLD_MS = 1_000;
const BODY_MS = 300;

/**
 * The in-memory backend as ZooKeeper looks to a client: a clock of its own (writes are
 * stamped on it, `serverTime` reads it) and writes stamped between request and answer.
 */
function remote(backend: InMemoryLockBackend): LockBackend {
  const serverNow = (): number => Date.now() + SERVER_OFFSET_MS;
  const shifted = (record: StoredRecord | null) =>
    record && { ...record, writtenAt: record.writtenAt + SERVER_OFFSET_MS };
  return Object.assign(Object.create(backend) as LockBackend, {
    readRecord: async (name: string) => shifted(await backend.readRecord(name)),
    writeRecord: async (name: string, data: RecordData, options?: WriteRecordOptions) => {
      await sleep(REQUEST_MS);
      const written = await backend.writeRecord(name, data, options);
      await sleep(ANSWER_MS);
      return written;
    },
    serverTime: async () => {
      await sleep(REQUEST_MS);
      const now = serverNow();
      await sleep(ANSWER_MS);
      return now;
    },
  });
}

/** The clock arithmetic of holds kept in the backend, to the millisecond, on a fake clock. */
describe('KeptHolds: the hold ends on the backend clock, never early', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'], now: 1e12 }));
  afterEach(() => jest.useRealTimers());

  /** Runs `work` while the fake clock advances, 1 ms at a time, until it settles. */
  async function settle<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const watched = work.finally(() => (done = true));
    while (!done) await jest.advanceTimersByTimeAsync(1);
    return watched;
  }

  it.each([
    ['behind', -5_000],
    ['ahead of', 5_000],
  ])(
    "backend clock %s the instances': the record's hold ends no earlier than holdAtLeastMs after the body started, and a waiting call starts no earlier",
    async (_label, offset) => {
      SERVER_OFFSET_MS = offset;
      const store = new InMemoryLockStore();
      const [a, b] = [0, 1].map(() => new ReentrantLocker(remote(new InMemoryLockBackend({ store })), 60_000));
      const mine = remote(new InMemoryLockBackend({ store }));
      let firstStart = 0;
      await settle(
        a.withLock('tick', () => ((firstStart = Date.now()), sleep(BODY_MS)), {
          ifLocked: 'skip',
          holdAtLeastMs: HOLD_MS,
        }),
      );
      const { holdUntil } = readJobState(await mine.readRecord(jobRecordName('tick')));
      // On the backend's clock; the writer can be late by the request's travel, never early.
      expect(holdUntil! - (firstStart + SERVER_OFFSET_MS)).toBeGreaterThanOrEqual(HOLD_MS);
      expect(holdUntil! - (firstStart + SERVER_OFFSET_MS)).toBeLessThanOrEqual(HOLD_MS + REQUEST_MS);

      // A skip meanwhile skips; a wait waits out the hold and starts after its end (on the backend's clock).
      await expect(
        settle(b.withLock('tick', () => 'late', { ifLocked: 'skip', holdAtLeastMs: HOLD_MS })),
      ).resolves.toBe(undefined);
      let secondStart = 0;
      await settle(b.withLock('tick', () => (secondStart = Date.now()), { holdAtLeastMs: HOLD_MS, timeoutMs: 5_000 }));
      expect(secondStart + SERVER_OFFSET_MS).toBeGreaterThanOrEqual(holdUntil!);
      expect(secondStart + SERVER_OFFSET_MS - holdUntil!).toBeLessThanOrEqual(REQUEST_MS + ANSWER_MS + 5);
    },
  );
});

/** A record written between a job's grant and its end (a holder that lost the lock writing late). */
describe('KeptHolds: a write that loses its version check', () => {
  const late = { hold: { until: 4e12 }, runs: [{ by: 'stale:1', outcome: 'lost', tookMs: 5 }] };

  it.each([
    ['without hold time of its own, keeps the other writer’s hold', 0, { until: 4e12 }],
    ['with hold time left, replaces it with its own', 60_000, { afterWriteMs: expect.any(Number) }],
  ])('is made again over what is there, %s, and keeps both runs', async (_label, holdAtLeastMs, hold) => {
    const backend = new InMemoryLockBackend();
    const locker = new ReentrantLocker(backend, 1_000);
    const record = jobRecordName('job');
    await locker.withLock('job', () => backend.writeRecord(record, late), { holdAtLeastMs, maxHoldMs: 60_000 });
    const written = await backend.readRecord(record);
    expect(written?.version).toBe(1);
    expect(written?.data).toEqual({
      hold,
      runs: [
        {
          id: expect.any(String),
          by: expect.any(String),
          identity: backend.identity,
          outcome: 'ok',
          tookMs: expect.any(Number),
        },
        { by: 'stale:1', outcome: 'lost', startedAt: expect.any(Number), endedAt: expect.any(Number) },
      ],
    });
  });
});

/** A job whose record write fails (ZooKeeper refused it, or the answer never came). */
describe('KeptHolds: a record write that fails', () => {
  /** `backend` with its record writes refused, and its lock handles' `releaseKeeping` as `keeping` says. */
  function failing(backend: InMemoryLockBackend, keeping: 'kept' | 'refused' | 'absent'): LockBackend {
    return Object.assign(Object.create(backend) as LockBackend, {
      writeRecord: () => Promise.reject(new Error('write refused')),
      acquire: async (...args: Parameters<LockBackend['acquire']>) => {
        const handle = await backend.acquire(...args);
        if (keeping === 'refused') Object.assign(handle, { releaseKeeping: () => Promise.resolve(false) });
        if (keeping === 'absent') Object.assign(handle, { releaseKeeping: undefined });
        return handle;
      },
    });
  }

  it.each([
    ['a kept hold in the backend', 'kept', true],
    ['the lock held in the process when the backend could not keep a hold', 'refused', false],
    ['the lock held in the process when the backend has no kept holds', 'absent', false],
  ] as const)(
    'keeps the hold anyway, as %s: no call of the name runs within holdAtLeastMs',
    async (_label, keeping, kept) => {
      const store = new InMemoryLockStore();
      const mine = new InMemoryLockBackend({ store });
      const [a, b] = [
        new ReentrantLocker(failing(mine, keeping), 1_000),
        new ReentrantLocker(new InMemoryLockBackend({ store }), 1_000),
      ];
      await a.withLock('tick', () => 'ran', { holdAtLeastMs: 60_000 });
      expect(await b.withLock('tick', () => 'twice', { holdAtLeastMs: 60_000, ifLocked: 'skip' })).toBeUndefined();
      expect(await b.tryAcquire('tick')).toBeNull();
      // How the hold is kept: in the backend (the lock itself released) or by the lock held here.
      expect((await mine.contenders('tick')).length).toBe(kept ? 0 : 1);
      await a.drain(0); // shutdown: a hold kept in the process ends, the lock released...
      expect(await mine.contenders('tick')).toEqual([]);
      const during = await b.tryAcquire('tick');
      expect(during === null).toBe(kept); // ...while one kept in the backend lasts until its end, or its session's
      await during?.release();
      mine.expireSession();
      const after = await b.tryAcquire('tick');
      expect(after).not.toBeNull();
      await after!.release();
    },
  );
});
