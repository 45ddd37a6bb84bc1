import diagnostics from 'node:diagnostics_channel';

import {
  LOCK_CHANNELS,
  ReentrantLocker,
  type AcquireMessage,
  type LostMessage,
  type ReleaseMessage,
  type SessionMessage,
} from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

/** What the ZooKeeper backend publishes on node:diagnostics_channel, read by plain subscribers. */
describe('diagnostics channels', () => {
  let fx: LockFixture;
  const acquires: Array<{ event: string; message: AcquireMessage }> = [];
  const releases: ReleaseMessage[] = [];
  const losses: LostMessage[] = [];
  const sessions: SessionMessage[] = [];
  const tracing = diagnostics.tracingChannel<unknown, AcquireMessage>(LOCK_CHANNELS.acquire);
  const handlers = {
    start: (message: AcquireMessage) => void acquires.push({ event: 'start', message: { ...message } }),
    end: () => undefined,
    asyncStart: () => undefined,
    asyncEnd: (message: AcquireMessage) => void acquires.push({ event: 'asyncEnd', message: { ...message } }),
    error: (message: AcquireMessage) => void acquires.push({ event: 'error', message: { ...message } }),
  };
  const onRelease = (message: unknown): void => void releases.push(message as ReleaseMessage);
  const onLost = (message: unknown): void => void losses.push(message as LostMessage);
  const onSession = (message: unknown): void => void sessions.push(message as SessionMessage);
  beforeAll(async () => {
    fx = await LockFixture.create('diagnostics');
    tracing.subscribe(handlers);
    diagnostics.subscribe(LOCK_CHANNELS.release, onRelease);
    diagnostics.subscribe(LOCK_CHANNELS.lost, onLost);
    diagnostics.subscribe(LOCK_CHANNELS.session, onSession);
  });
  afterAll(async () => {
    tracing.unsubscribe(handlers);
    diagnostics.unsubscribe(LOCK_CHANNELS.release, onRelease);
    diagnostics.unsubscribe(LOCK_CHANNELS.lost, onLost);
    diagnostics.unsubscribe(LOCK_CHANNELS.session, onSession);
    await fx.cleanup();
  });
  beforeEach(() => {
    acquires.length = releases.length = losses.length = sessions.length = 0;
  });
  const settled = () =>
    acquires
      .filter((a) => a.event === 'asyncEnd')
      .map((a) => [a.message.kind, a.message.name, a.message.mode, a.message.outcome]);

  it('traces each acquire: start, then its outcome and wait; each release with the time held', async () => {
    const [a, b] = await fx.many(2);
    const lock = await a.acquire('job', { mode: 'write' });
    expect(await b.tryAcquire('job')).toBeNull();
    await expect(b.acquire('job', { timeoutMs: 50 })).rejects.toMatchObject({ code: 'LOCK_TIMEOUT' });
    const aborted = new AbortController();
    const waiting = b.acquire('job', { signal: aborted.signal });
    aborted.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'LOCK_ABORTED' });
    await lock.release();
    const group = await a.acquireAll(['x', { name: 'y', mode: 'read' }]);
    await group.release();
    const lease = await a.acquireLease('pool', { maxLeases: 2 });
    await lease.release();

    expect(acquires.filter((e) => e.event === 'start').map((e) => e.message.name)).toEqual([
      'job',
      'job',
      'job',
      'job',
      'x, y',
      'pool',
    ]);
    expect(settled()).toEqual([
      ['lock', 'job', 'write', 'granted'],
      ['lock', 'job', 'write', 'taken'],
      ['lock', 'job', 'write', 'timeout'],
      ['lock', 'job', 'write', 'aborted'],
      ['group', 'x, y', 'mixed', 'granted'],
      ['lease', 'pool', 'lease', 'granted'],
    ]);
    const waited = acquires.filter((e) => e.event === 'asyncEnd').map((e) => e.message.waitedMs!);
    expect(waited.every((ms) => ms > 0)).toBe(true);
    expect(waited[2]).toBeGreaterThanOrEqual(50); // the timeout waited its 50 ms
    expect(acquires.filter((e) => e.event === 'error')).toHaveLength(2); // timeout and abort
    expect(releases.map((r) => [r.kind, r.name, r.mode])).toEqual([
      ['lock', 'job', 'write'],
      ['lock', 'x', 'write'],
      ['lock', 'y', 'read'],
      ['lease', 'pool', 'lease'],
    ]);
    expect(releases.every((r) => r.heldMs >= 0)).toBe(true);
  });

  it('publishes a lost lock and the session going (lost, a new one connected)', async () => {
    const holder = await fx.expirable();
    const lock = await holder.acquire('lost-one');
    await fx.expire(holder);
    await waitUntil(() => lock.signal.aborted, 'the holder is told');
    expect(losses).toEqual([
      {
        kind: 'lock',
        name: 'lost-one',
        mode: 'write',
        heldMs: expect.any(Number),
        reason: 'session',
        why: expect.stringContaining('session'),
      },
    ]);
    // The holder's first session published 'connected' too: wait for one after the loss.
    const states = (): string[] => sessions.map((s) => s.state);
    await waitUntil(
      () => states().includes('lost') && states().lastIndexOf('connected') > states().indexOf('lost'),
      'a new session connects after the loss',
    );
    expect(sessions.find((s) => s.state === 'connected')).toMatchObject({
      sessionId: expect.stringMatching(/^0x[0-9a-f]{16}$/),
      server: expect.stringMatching(/:\d+$/),
    });
    await lock.release();
    await holder.close();
    expect(sessions.at(-1)).toEqual({ state: 'closed' });
  });

  it("a withLock call with ifLocked 'skip' that finds the lock taken shows as taken", async () => {
    const [a, b] = await fx.many(2);
    const lock = await a.acquire('skipped');
    const locker = new ReentrantLocker(b, 1000);
    await expect(locker.withLock('skipped', () => 'ran', { ifLocked: 'skip' })).resolves.toBeUndefined();
    expect(settled()).toEqual([
      ['lock', 'skipped', 'write', 'granted'],
      ['lock', 'skipped', 'write', 'taken'],
    ]);
    await lock.release();
  });

  it('builds nothing when no one listens', async () => {
    tracing.unsubscribe(handlers);
    try {
      const [a] = await fx.many(1);
      await (await a.acquire('quiet')).release();
      expect(acquires).toEqual([]);
    } finally {
      tracing.subscribe(handlers);
    }
  });
});
