import { LockClientClosedError, LockTimeoutError } from '../errors/errors.js';
import { InMemoryLockBackend } from './in-memory-lock-backend.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';

describe('InMemoryLockBackend: one client among several on a store', () => {
  let store: InMemoryLockStore;
  let made: InMemoryLockBackend[];
  const backends = (count: number): InMemoryLockBackend[] =>
    Array.from({ length: count }, () => {
      const backend = new InMemoryLockBackend({ store });
      made.push(backend);
      return backend;
    });
  beforeEach(() => {
    store = new InMemoryLockStore();
    made = [];
  });
  afterEach(async () => {
    jest.useRealTimers();
    await Promise.all(made.map((backend) => backend.close()));
  });

  it('needs no start(); start() resolves, also again and after close()', async () => {
    const [a] = backends(1);
    await (await a.acquire('x')).release();
    await expect(a.start()).resolves.toBeUndefined();
    await a.close();
    await expect(a.start()).resolves.toBeUndefined();
  });

  it("cancelWaits() ends this backend's waits only", async () => {
    const [a, b, c] = backends(3);
    const held = await a.acquire('x');
    const bWaits = b.acquire('x').catch((e: unknown) => e);
    const cWaits = c.acquire('x');
    await b.cancelWaits();
    expect(await bWaits).toBeInstanceOf(LockClientClosedError);
    expect((await a.contenders('x')).map((x) => x.identity)).toEqual([a.identity, c.identity]);
    await held.release();
    await (await cWaits).release();
  });

  it('close() ends this backend only, returns one promise, and turns the test controls into no-ops', async () => {
    const [a, b] = backends(2);
    const mine = await a.acquire('mine');
    const theirs = await b.acquire('theirs');
    const closing = a.close();
    expect(a.close()).toBe(closing);
    await closing;
    expect([mine.isHeld(), theirs.isHeld()]).toEqual([false, true]);
    expect(() => a.loseLock('theirs')).not.toThrow();
    expect(() => a.expireSession()).not.toThrow();
    expect(theirs.isHeld()).toBe(true);
    await expect(b.contenders('mine')).resolves.toEqual([]);
    await theirs.release();
  });

  it('clears its timer when a wait is granted, and sets none for timeoutMs 0 or Infinity', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
    const [a, b] = backends(2);
    const held = await a.acquire('x');
    const waits = [b.acquire('x', { timeoutMs: 60_000 }), b.acquire('x')];
    expect(jest.getTimerCount()).toBe(1);
    expect(await b.tryAcquire('x')).toBeNull();
    await expect(b.acquire('x', { timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(jest.getTimerCount()).toBe(1);
    await held.release();
    const first = await waits[0];
    expect(jest.getTimerCount()).toBe(0);
    await first.release();
    await (await waits[1]).release();
  });

  it('times a wait out at timeoutMs exactly, leaving no entry', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
    const [a, b] = backends(2);
    const held = await a.acquire('x');
    let outcome: unknown;
    void b.acquire('x', { timeoutMs: 500 }).catch((e: unknown) => (outcome = e));
    jest.advanceTimersByTime(499);
    await Promise.resolve();
    expect(outcome).toBeUndefined();
    jest.advanceTimersByTime(1);
    await new Promise(process.nextTick);
    expect(outcome).toMatchObject({ code: 'LOCK_TIMEOUT', timeoutMs: 500 });
    expect((await a.contenders('x')).length).toBe(1);
    await held.release();
  });

  it('an abort after the grant changes nothing', async () => {
    const [a] = backends(1);
    const controller = new AbortController();
    const lock = await a.acquire('x', { signal: controller.signal });
    controller.abort();
    expect(lock.isHeld()).toBe(true);
    await lock.release();
  });
});
