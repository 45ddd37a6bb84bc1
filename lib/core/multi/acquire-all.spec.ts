import { setTimeout as sleep } from 'node:timers/promises';

import { InvalidOptionError, LockTimeoutError } from '../errors/errors.js';
import { InMemoryLockBackend } from '../memory/in-memory-lock-backend.js';
import { InMemoryLockStore } from '../memory/in-memory-lock-store.js';
import type { AcquireOptions, LockBackend, LockHandle } from '../port/lock-backend.js';
import { acquireAll } from './acquire-all.js';
import { compareKeys } from './multi-lock-plan.js';

// The rule of MultiLockAcquisition, step by step, over a recording in-memory backend; the
// same rule on ZooKeeper is tested in test/core/multi-lock*.spec.ts.

/**
 * Logs every acquire, try and release of an in-memory backend, and checks the ordering
 * rule at each wait. A proxy, so it is a whole `LockBackend` whatever the port grows.
 */
class Recorder {
  readonly log: string[] = [];
  readonly violations: string[] = [];
  private readonly held = new Set<string>();
  private inFlight = 0;
  maxInFlight = 0;
  failTry: string | undefined;
  /** Runs once a try got its lock, before the try resolves. */
  afterTry: ((name: string) => Promise<void>) | undefined;
  readonly backend: LockBackend;

  constructor(readonly inner: InMemoryLockBackend) {
    const overrides: Partial<LockBackend> = {
      acquire: (name, options) => this.acquire(name, options),
      tryAcquire: (name, options) => this.tryAcquire(name, options),
    };
    this.backend = new Proxy(inner, {
      get: (target, key) => {
        if (key in overrides) return overrides[key as keyof LockBackend];
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  private async acquire(name: string, options?: AcquireOptions): Promise<LockHandle> {
    this.log.push(`wait ${name}`);
    const later = [...this.held].filter((h) => compareKeys(h, name) > 0);
    if (later.length > 0) this.violations.push(`waited for ${name} holding ${later.join(',')}`);
    return this.track(await this.inner.acquire(name, options));
  }

  private async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<LockHandle | null> {
    this.log.push(`try ${name}`);
    if (name === this.failTry) throw new Error(`try of ${name} failed`);
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      const handle = await this.inner.tryAcquire(name, options);
      if (handle) await this.afterTry?.(name);
      return handle && this.track(handle);
    } finally {
      this.inFlight--;
    }
  }

  private track(handle: LockHandle): LockHandle {
    this.held.add(handle.name);
    return new Proxy(handle, {
      get: (target, key) => {
        if (key === 'release') {
          return async () => {
            if (this.held.delete(target.name)) this.log.push(`give ${target.name}`);
            await target.release();
          };
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

describe('MultiLockAcquisition (recording in-memory backend)', () => {
  let store: InMemoryLockStore;
  let other: InMemoryLockBackend;
  let rec: Recorder;
  let backend: LockBackend;
  beforeEach(() => {
    store = new InMemoryLockStore();
    other = new InMemoryLockBackend({ store });
    rec = new Recorder(new InMemoryLockBackend({ store }));
    backend = rec.backend;
  });
  afterEach(() => Promise.all([other.close(), rec.inner.close()]));

  it('free locks: one try each, all in flight together, nothing else', async () => {
    const group = await acquireAll(backend, ['c', 'a', 'b']);
    expect(rec.log).toEqual(['try a', 'try b', 'try c']);
    expect(rec.maxInFlight).toBe(3);
    expect(group.names).toEqual(['a', 'b', 'c']);
    await group.release();
  });

  it('a lock taken elsewhere: gives back the later ones, waits for it, then tries the rest', async () => {
    const held = await other.acquire('b');
    const pending = acquireAll(backend, ['c', 'b', 'a', 'd']);
    await sleep(5);
    expect(rec.log).toEqual(['try a', 'try b', 'try c', 'try d', 'give c', 'give d', 'wait b']);
    await held.release();
    const group = await pending;
    expect(rec.log.slice(7)).toEqual(['try c', 'try d']);
    expect(rec.violations).toEqual([]);
    await group.release();
  });

  it('never waits holding a later lock, whatever is taken and in whatever order callers list', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    let state = 7;
    const random = (): number => (state = (state * 16807) % 2147483647) / 2147483647;
    for (let round = 0; round < 40; round++) {
      const taken = names.filter(() => random() < 0.4);
      const handles = await Promise.all(
        taken.map((name) => other.acquire(name, { mode: random() < 0.5 ? 'read' : 'write' })),
      );
      const list = [...names]
        .sort(() => random() - 0.5)
        .map((name) => ({ name, mode: random() < 0.3 ? ('read' as const) : ('write' as const) }));
      const pending = acquireAll(backend, list);
      for (const handle of handles.sort(() => random() - 0.5)) {
        await sleep(random() * 2);
        await handle.release();
      }
      await (await pending).release();
    }
    expect(rec.violations).toEqual([]);
    expect(rec.log.filter((l) => l.startsWith('wait')).length).toBeGreaterThan(20); // the waits were exercised
  });

  it('timeoutMs 0: gives back what it got and fails with LockTimeoutError naming the lock taken', async () => {
    const held = await other.acquire('b');
    const error = await acquireAll(backend, ['a', 'b', 'c'], { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ lockName: 'b', timeoutMs: 0 });
    expect(rec.log).toEqual(['try a', 'try b', 'try c', 'give c', 'give a']);
    expect(await backend.contenders('a')).toEqual([]);
    await held.release();
  });

  it('a try that fails: the others settle first, then everything is given back and the error thrown', async () => {
    rec.failTry = 'b';
    const error = await acquireAll(backend, ['a', 'b', 'c']).catch((e: unknown) => e);
    expect((error as Error).message).toBe('try of b failed');
    expect(rec.log.sort()).toEqual(['give a', 'give c', 'try a', 'try b', 'try c']);
  });

  it('a lock lost during a round that waited for nobody: gives back the others and starts over, never resolving with a lost lock', async () => {
    let lost = false;
    rec.afterTry = async (name) => {
      if (name !== 'b' || lost) return;
      lost = true;
      await sleep(5); // a's try has resolved (the in-memory backend grants in microtasks)
      rec.inner.loseLock('a'); // no wait in this round: nothing watches a's signal but the final check
    };
    const group = await acquireAll(backend, ['a', 'b']);
    expect(rec.log).toEqual(['try a', 'try b', 'give a', 'give b', 'try a', 'try b']);
    expect(group.isHeld()).toBe(true);
    expect(group.signal.aborted).toBe(false);
    await group.release();
  });

  it('a lock lost while waiting: gives back the others and starts over, and ends holding all', async () => {
    const held = await other.acquire('b');
    const pending = acquireAll(backend, ['a', 'b']);
    await sleep(5);
    expect(rec.log).toEqual(['try a', 'try b', 'wait b']);
    rec.inner.loseLock('a');
    await sleep(5);
    expect(rec.log).toEqual(['try a', 'try b', 'wait b', 'give a', 'try a', 'try b', 'wait b']);
    await held.release();
    const group = await pending;
    expect(group.isHeld()).toBe(true);
    await group.release();
  });

  it('maxHoldMs: the locks are taken without it, a lock held early does not run out while another is awaited', async () => {
    const held = await other.acquire('b');
    const pending = acquireAll(backend, ['a', 'b'], { maxHoldMs: 20 });
    pending.catch(() => undefined); // a failed expectation below leaves it to afterEach's close
    await sleep(60); // "a" held three times maxHoldMs while "b" is awaited
    expect(rec.log).toEqual(['try a', 'try b', 'wait b']); // not lost, so not taken again
    await held.release();
    const group = await pending;
    expect(group.isHeld()).toBe(true);
    await new Promise((resolve) => group.signal.addEventListener('abort', resolve, { once: true }));
    expect(group.handles.map((handle) => handle.isHeld())).toEqual([false, false]);
    expect(await other.tryAcquire('a')).not.toBeNull(); // both given back, for the next
    expect(await other.tryAcquire('b')).not.toBeNull();
    await group.release();
  });

  it('maxHoldMs over a backend whose handles cannot expire a hold: InvalidOptionError, and the group released', async () => {
    // Another backend's handles: the LockHandle port, and nothing more.
    const bare = (handle: LockHandle): LockHandle => ({
      name: handle.name,
      mode: handle.mode,
      fencingToken: handle.fencingToken,
      get signal() {
        return handle.signal;
      },
      get revocation() {
        return handle.revocation;
      },
      get released() {
        return handle.released;
      },
      get releaseConfirmed() {
        return handle.releaseConfirmed;
      },
      isHeld: () => handle.isHeld(),
      assertHeld: () => handle.assertHeld(),
      release: () => handle.release(),
      [Symbol.asyncDispose]: () => handle.release(),
    });
    const plain: LockBackend = Object.assign(Object.create(rec.inner) as LockBackend, {
      tryAcquire: async (name: string, options?: AcquireOptions) => {
        const handle = await rec.inner.tryAcquire(name, options);
        return handle && bare(handle);
      },
    });
    const error = await acquireAll(plain, ['a', 'b'], { maxHoldMs: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option: 'maxHoldMs' });
    expect((error as Error).message).toMatch(/ZkLockBackend and InMemoryLockBackend/);
    expect([...(await other.contenders('a')), ...(await other.contenders('b'))]).toEqual([]);
  });
});
