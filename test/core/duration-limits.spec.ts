import { setTimeout as sleep } from 'node:timers/promises';

import {
  InMemoryLockBackend,
  InvalidOptionError,
  LockTimeoutError,
  LeaderElection,
  ReentrantLocker,
  ZkLockBackend,
  type ZkLockOptions,
} from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { thrownBy } from '../support/thrown-by';
import { MAX_TIMER_MS, OverlongTimers } from '../support/overlong-timers';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { runWorker } from '../support/run-worker';

const DAY = 24 * 3600 * 1000;
/**
 * How long each test watches for an early fire. A delay past setTimeout's range fires
 * after 1 ms when it is not chained, so this is plenty, and generous on a loaded machine.
 */
const WATCH_MS = 200;

/**
 * Every duration option at the largest value it accepts: nothing fires early (a plain
 * setTimeout would fire after 1 ms), and the next value past a refused limit is an
 * InvalidOptionError that names the limit.
 */
describe('duration options at their maximum', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('duration-limits')));
  afterAll(() => fx.cleanup());
  // Node cuts a delay past its range to 1 ms, with a TimeoutOverflowWarning: no test here arms one.
  let overlong: OverlongTimers;
  beforeEach(() => (overlong = new OverlongTimers()));
  afterEach(() => expect(overlong.stop()).toEqual([]));

  describe('holdAtLeastMs (any finite number >= 0)', () => {
    it.each([
      ['28 days (a monthly job)', 28 * DAY],
      ['Number.MAX_VALUE, the largest accepted', Number.MAX_VALUE],
    ])(
      "%s: withLock keeps the hold in its record after the body, and another client's job call cannot run",
      async (_label, ms) => {
        const [a, b] = await fx.many(2);
        const locker = new ReentrantLocker(a, 10_000);
        const name = `hold-${ms}`;
        await expect(locker.withLock(name, () => 'ran', { holdAtLeastMs: ms })).resolves.toBe('ran');
        await sleep(WATCH_MS);
        // No lock node: the kept hold's marker, which every caller honours.
        expect(await fx.nodes(name)).toEqual([expect.stringMatching(/^kept-hold-[0-9a-f]{32}-lock-/)]);
        await expect(b.tryAcquire(name)).resolves.toBeNull();
        const other = new ReentrantLocker(b, 10_000);
        await expect(
          other.withLock(name, () => 'ran', { ifLocked: 'skip', holdAtLeastMs: ms }),
        ).resolves.toBeUndefined();
        // A wait waits for the marker, within its own timeout.
        await expect(other.withLock(name, () => 'ran', { holdAtLeastMs: ms, timeoutMs: 1_000 })).rejects.toBeInstanceOf(
          LockTimeoutError,
        );
        await expect(locker.drain(1_000)).resolves.toBe(true);
      },
    );

    it('withLocks: 28 days keeps every node of the group after the body', async () => {
      const [a, b] = await fx.many(2);
      const locker = new ReentrantLocker(a, 10_000);
      await locker.withLocks(['group-1', 'group-2'], () => undefined, { holdAtLeastMs: 28 * DAY });
      await sleep(WATCH_MS);
      expect(await fx.nodes('group-1')).toHaveLength(1);
      expect(await fx.nodes('group-2')).toHaveLength(1);
      await expect(b.tryAcquire('group-2')).resolves.toBeNull();
      await locker.drain(1_000);
      expect(await fx.nodes('group-1')).toBeNull();
      expect(await fx.nodes('group-2')).toBeNull();
    });

    it('Infinity is refused, naming the limit', async () => {
      const [a] = await fx.many(1);
      const error = await new ReentrantLocker(a, 10_000)
        .withLock('hold-inf', () => 'ran', { holdAtLeastMs: Infinity })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toContain('holdAtLeastMs=Infinity: expected a finite number of milliseconds');
      expect(await fx.nodes('hold-inf')).toBeNull();
    });
  });

  describe('timeoutMs (any number >= 0; Infinity waits forever)', () => {
    const LONGEST = Number.MAX_VALUE; // the largest finite value accepted: a timer is armed for it

    it('acquire waits on a held lock with the largest finite timeout, then gets it', async () => {
      const [a, b] = await fx.many(2);
      const held = await a.acquire('timeout-1');
      let settled = false;
      const waiting = b.acquire('timeout-1', { timeoutMs: LONGEST }).finally(() => (settled = true));
      await fx.queued('timeout-1', 2);
      await sleep(WATCH_MS);
      expect(settled).toBe(false);
      expect(await fx.nodes('timeout-1')).toHaveLength(2);
      await held.release();
      const lock = await waiting;
      expect(await fx.nodes('timeout-1')).toEqual([nodeOf(lock)]);
      await lock.release();
    });

    it('acquireAll waits with the largest finite timeout, then gets every lock', async () => {
      const [a, b] = await fx.many(2);
      const held = await a.acquire('timeout-2b');
      let settled = false;
      const waiting = b
        .acquireAll(['timeout-2a', 'timeout-2b'], { timeoutMs: LONGEST })
        .finally(() => (settled = true));
      await fx.queued('timeout-2b', 2);
      await sleep(WATCH_MS);
      expect(settled).toBe(false);
      await held.release();
      const group = await waiting;
      expect(await fx.nodes('timeout-2a')).toHaveLength(1);
      expect(await fx.nodes('timeout-2b')).toHaveLength(1);
      await group.release();
    });

    it('acquireLease waits with the largest finite timeout, then gets a lease', async () => {
      const [a, b] = await fx.many(2);
      const held = await a.acquireLease('timeout-3', { maxLeases: 1 });
      let settled = false;
      const waiting = b.acquireLease('timeout-3', { maxLeases: 1, timeoutMs: LONGEST }).finally(() => (settled = true));
      await sleep(WATCH_MS);
      expect(settled).toBe(false);
      await held.release();
      const lease = await waiting;
      expect(lease.isHeld()).toBe(true);
      await lease.release();
    });

    it('the in-memory backend waits with the largest finite timeout too', async () => {
      const backend = new InMemoryLockBackend();
      const held = await backend.acquire('timeout-4');
      let settled = false;
      const waiting = backend.acquire('timeout-4', { timeoutMs: LONGEST }).finally(() => (settled = true));
      await sleep(WATCH_MS);
      expect(settled).toBe(false);
      await held.release();
      await (await waiting).release();
      await backend.close();
    });
  });

  describe('emptyDirectoryGraceMs (a whole number of ms up to Number.MAX_SAFE_INTEGER)', () => {
    it('at the maximum, an emptied directory stays; close() removes it', async () => {
      const backend = await ZkLockBackend.connect({
        connectionString: zkConnect(),
        rootPath: fx.rootPath,
        emptyDirectoryGraceMs: Number.MAX_SAFE_INTEGER,
      });
      try {
        await (await backend.acquire('grace-1')).release();
        await sleep(WATCH_MS);
        expect(await fx.nodes('grace-1', backend)).toEqual([]); // there, and empty
      } finally {
        await backend.close();
      }
      expect(await fx.nodes('grace-1', backend)).toBeNull();
    });

    it('one past the maximum is refused, naming it', async () => {
      await expectRefused({ emptyDirectoryGraceMs: Number.MAX_SAFE_INTEGER + 1 }, Number.MAX_SAFE_INTEGER);
    });
  });

  describe('sessionTimeoutMs (a whole number of ms up to 2^31 - 1, as ZooKeeper carries it)', () => {
    it('at the maximum, the session opens, with the timeout the server allows', async () => {
      const backend = await fx.backend({ sessionTimeoutMs: MAX_TIMER_MS });
      expect(backend.status().state).toBe('connected');
      const { timeoutMs } = backend.status();
      expect(timeoutMs).toBeGreaterThan(0);
      expect(timeoutMs).toBeLessThan(MAX_TIMER_MS); // clamped by maxSessionTimeout
      const lock = await backend.acquire('session-1');
      expect(await fx.nodes('session-1')).toEqual([nodeOf(lock)]);
      await lock.release();
    });

    it('one past the maximum is refused, naming it', async () => {
      await expectRefused({ sessionTimeoutMs: MAX_TIMER_MS + 1 }, MAX_TIMER_MS);
    });
  });

  describe('connectTimeoutMs (a whole number of ms up to Number.MAX_SAFE_INTEGER)', () => {
    it('at the maximum, a connect that gets no answer keeps trying instead of failing at once', async () => {
      const proxy = new TcpProxy(zkPort());
      await proxy.start();
      proxy.blackhole(); // accepts the connection, answers nothing
      try {
        let settled = false;
        const connecting = ZkLockBackend.connect({
          connectionString: proxy.connectionString,
          rootPath: fx.rootPath,
          sessionTimeoutMs: 3000,
          connectTimeoutMs: Number.MAX_SAFE_INTEGER,
        }).finally(() => (settled = true));
        await sleep(WATCH_MS);
        expect(settled).toBe(false);
        proxy.heal(); // the next attempt (after the attempt deadline) gets through
        const backend = await connecting;
        expect(backend.status().state).toBe('connected');
        await backend.close();
      } finally {
        await proxy.stop();
      }
    });

    it('one past the maximum is refused, naming it', async () => {
      await expectRefused({ connectTimeoutMs: Number.MAX_SAFE_INTEGER + 1 }, Number.MAX_SAFE_INTEGER);
    });
  });

  describe('retryDelayMs of LeaderElection (up to 2^31 - 1: a retry waits one timer)', () => {
    it('accepts the maximum and refuses one past it, naming it', async () => {
      const [a] = await fx.many(1);
      const election = new LeaderElection(a, 'retry-max', { retryDelayMs: MAX_TIMER_MS });
      await election.stop();
      const error = thrownBy(() => new LeaderElection(a, 'retry-max', { retryDelayMs: MAX_TIMER_MS + 1 }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toContain(`from 0 to ${MAX_TIMER_MS}`);
    });
  });

  /** `connect` with `options` fails before connecting, with an InvalidOptionError naming `limit`. */
  async function expectRefused(options: Partial<ZkLockOptions>, limit: number): Promise<void> {
    const error = await ZkLockBackend.connect({
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      ...options,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain(`a whole number of milliseconds from`);
    expect((error as Error).message).toContain(` to ${limit}.`);
  }
});

// A process of its own: only there are Node's own warnings heard whole.
describe('longTimeout in a process of its own', () => {
  it('waits past 2^31 - 1 ms without a TimeoutOverflowWarning and without firing early (in a process of its own)', async () => {
    // setTimeout(fn, 28 days) fires after 1 ms; the worker's own process hears Node's warnings.
    const report = await runWorker<{ fired: number[]; warnings: string[] }>('long-timeout.worker.ts', {
      delays: [28 * DAY, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE],
      watchMs: 100,
    });
    expect(report).toEqual({ fired: [], warnings: [] });
  });
});
