import { InvalidOptionError, LockReentryError, ReentrantLocker } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

/** `reentrant: false`: Curator's non-reentrant mutex (InterProcessSemaphoreMutex), failing fast instead of waiting on itself. */
describe('reentrant: false', () => {
  let fx: LockFixture;
  let locker: ReentrantLocker;
  let creates: () => number;
  beforeAll(async () => {
    fx = await LockFixture.create('non-reentrant');
    const backend = await fx.backend();
    locker = new ReentrantLocker(backend, 5_000);
    creates = () => backend.client.counter.snapshot().create ?? 0;
  });
  afterAll(() => fx.cleanup());

  it('inside a chain that holds the lock, withLock, acquire and tryAcquire fail at once with LockReentryError and queue nothing', async () => {
    const [backend] = await fx.many(1);
    const own = new ReentrantLocker(backend, 5_000);
    await own.withLock('nr-1', async () => {
      const before = backend.client.counter.snapshot().create ?? 0;
      for (const attempt of [
        () => own.withLock('nr-1', () => 'ran', { reentrant: false }),
        () => own.withLock('nr-1', () => 'ran', { reentrant: false, mode: 'read' }),
        () => own.acquire('nr-1', { reentrant: false }),
        () => own.tryAcquire('nr-1', { reentrant: false }),
      ]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockReentryError);
        expect(error).toMatchObject({ code: 'LOCK_REENTRY', lockName: 'nr-1' });
        expect((error as Error).message).toMatch(/"nr-1".*reentrant: false/);
      }
      expect(backend.client.counter.snapshot().create ?? 0).toBe(before);
      expect(await fx.nodes('nr-1')).toHaveLength(1);
    });
    expect(await fx.nodes('nr-1')).toBeNull();
  });

  it('outside a hold it queues its own node like any acquire; reentrant calls inside it join it', async () => {
    const [backend] = await fx.many(1);
    const own = new ReentrantLocker(backend, 5_000);
    const result = await own.withLock(
      'nr-2',
      async (outer) => {
        expect(await fx.nodes('nr-2')).toHaveLength(1);
        // A reentrant call inside a non-reentrant hold joins it: no second node.
        return own.withLock('nr-2', (inner) => inner.fencingToken === outer.fencingToken);
      },
      { reentrant: false },
    );
    expect(result).toBe(true);
    expect(await fx.nodes('nr-2')).toBeNull();
  });

  it('two chains each asking reentrant: false exclude each other, as two processes would', async () => {
    let inside = 0;
    let most = 0;
    const section = () =>
      locker.withLock(
        'nr-3',
        async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inside--;
        },
        { reentrant: false },
      );
    await Promise.all([section(), section(), section()]);
    expect(most).toBe(1);
  });

  it('a bad value is refused with InvalidOptionError naming reentrant, before anything is sent', async () => {
    const before = creates();
    for (const call of [
      () => locker.withLock('nr-4', () => 'ran', { reentrant: 'no' as never }),
      () => locker.acquire('nr-4', { reentrant: 0 as never }),
      () => locker.tryAcquire('nr-4', { reentrant: null as never }),
    ]) {
      await expect(call()).rejects.toMatchObject({ constructor: InvalidOptionError, option: 'reentrant' });
    }
    expect(creates()).toBe(before);
  });
});
