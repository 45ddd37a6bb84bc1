import {
  InvalidLockNameError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ZkSessionLostError,
} from '../errors/errors.js';
import type { LockContender } from '../port/lock-backend.js';
import { InMemoryLockBackend } from './in-memory-lock-backend.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';

describe('InMemoryLockBackend', () => {
  let store: InMemoryLockStore;
  let made: InMemoryLockBackend[];
  const backends = (count: number): InMemoryLockBackend[] =>
    Array.from({ length: count }, (_, i) => {
      const backend = new InMemoryLockBackend({ store, identity: `client-${i}` });
      made.push(backend);
      return backend;
    });
  const who = (contenders: LockContender[]): Array<[string | null, boolean]> =>
    contenders.map((c) => [c.identity, c.holding]);
  beforeEach(() => {
    store = new InMemoryLockStore();
    made = [];
  });
  afterEach(async () => {
    jest.useRealTimers();
    await Promise.all(made.map((backend) => backend.close()));
  });

  describe('one client among several on a store', () => {
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

  describe('test controls', () => {
    describe('loseLock(name)', () => {
      it("takes away every lock this backend holds on the name, and nobody else's", async () => {
        const [a, b] = backends(2);
        const [ra1, ra2, rb, other] = await Promise.all([
          a.acquire('doc', { mode: 'read' }),
          a.acquire('doc', { mode: 'read' }),
          b.acquire('doc', { mode: 'read' }),
          a.acquire('other'),
        ]);
        a.loseLock('doc');
        expect([ra1, ra2, rb, other].map((h) => h.isHeld())).toEqual([false, false, true, true]);
        expect(ra1.signal.reason).toBeInstanceOf(LockLostError);
        expect(ra1.signal.reason).toMatchObject({ code: 'LOCK_LOST', lockName: 'doc' });
        expect(ra1.signal.reason.message).toMatch(
          /^Lock "doc" was lost: the test took it away with InMemoryLockBackend\.loseLock\("doc"\)/,
        );
        expect(who(await b.contenders('doc'))).toEqual([['client-1', true]]);
        await Promise.all([ra1.release(), rb.release(), other.release()]); // a lost handle's release is a no-op
        expect(ra1.released).toBe(true);
      });

      it('aborts the signal while the entry is still queued, then lets the waiter behind in', async () => {
        const [a, b] = backends(2);
        const held = await a.acquire('x');
        const waiting = b.acquire('x');
        let queueWhenTold: Promise<LockContender[]> | undefined;
        held.signal.addEventListener('abort', () => (queueWhenTold = b.contenders('x'))); // read at once
        a.loseLock('x');
        expect(who(await queueWhenTold!)).toEqual([
          ['client-0', true],
          ['client-1', false],
        ]);
        const next = await waiting;
        expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
        await next.release();
      });

      it("leaves this backend's own waits on the name queued: the next one gets the lock", async () => {
        const [a] = backends(1);
        const held = await a.acquire('x');
        const waiting = a.acquire('x');
        a.loseLock('x');
        const next = await waiting;
        expect(held.signal.aborted).toBe(true);
        expect(next.isHeld()).toBe(true);
        await next.release();
      });

      it('does nothing for a name this backend does not hold, and refuses a bad name', async () => {
        const [a, b] = backends(2);
        const held = await b.acquire('x');
        a.loseLock('x');
        expect(held.isHeld()).toBe(true);
        expect(() => a.loseLock('')).toThrow(InvalidLockNameError);
        await held.release();
      });
    });

    describe('expireSession()', () => {
      it('loses every lock the backend holds, telling each holder first, with a ZkSessionLostError as the cause', async () => {
        const [a, b] = backends(2);
        const x = await a.acquire('x');
        const y = await a.acquire('y', { mode: 'read' });
        const waiting = b.acquire('x');
        let queueWhenTold: Promise<LockContender[]> | undefined;
        x.signal.addEventListener('abort', () => (queueWhenTold = b.contenders('x')));

        a.expireSession();
        expect(who(await queueWhenTold!)).toEqual([
          ['client-0', true],
          ['client-1', false],
        ]);
        for (const [handle, name] of [
          [x, 'x'],
          [y, 'y'],
        ] as const) {
          expect(handle.signal.reason).toBeInstanceOf(LockLostError);
          expect(handle.signal.reason).toMatchObject({ lockName: name });
          expect(handle.signal.reason.message).toContain('InMemoryLockBackend.expireSession()');
          expect(handle.signal.reason.cause).toBeInstanceOf(ZkSessionLostError);
          expect(handle.signal.reason.cause).toMatchObject({ code: 'SESSION_LOST', why: 'expired by the test' });
        }
        expect(await a.contenders('y')).toEqual([]);
        await (await waiting).release();
      });

      it('queues its waits again at the back with new entries, as the ZooKeeper backend does in its new session', async () => {
        const [a, b, c] = backends(3);
        const held = await b.acquire('x');
        const aWaits = a.acquire('x');
        const cWaits = c.acquire('x');
        const before = await b.contenders('x');

        a.expireSession();
        const after = await b.contenders('x');
        expect(who(after)).toEqual([
          ['client-1', true],
          ['client-2', false],
          ['client-0', false],
        ]);
        expect(after[2].node).not.toBe(before[1].node);
        expect(after[2].sequence).toBeGreaterThan(before[2].sequence);

        await held.release();
        const cLock = await cWaits;
        expect(who(await b.contenders('x'))).toEqual([
          ['client-2', true],
          ['client-0', false],
        ]);
        await cLock.release();
        const aLock = await aWaits;
        expect(aLock.node).toBe(after[2].node);
        await aLock.release();
      });

      it("keeps a requeued wait's timeout running from the call, as the ZooKeeper backend does", async () => {
        jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
        const [a, b] = backends(2);
        const held = await b.acquire('x');
        const waiting = a.acquire('x', { timeoutMs: 1000 }).catch((e: unknown) => e);
        jest.advanceTimersByTime(600);
        a.expireSession();
        jest.advanceTimersByTime(400);
        expect(await waiting).toBeInstanceOf(LockTimeoutError);
        expect(who(await b.contenders('x'))).toEqual([['client-1', true]]);
        expect(jest.getTimerCount()).toBe(0);
        await held.release();
      });

      it('starts a new session each time and stays usable; waits started by a told holder are not queued twice', async () => {
        const [a] = backends(1);
        const first = await a.acquire('x');
        let again: Promise<unknown> | undefined;
        first.signal.addEventListener('abort', () => (again = a.acquire('x')));
        a.expireSession();
        const second = (await again) as Awaited<ReturnType<typeof a.acquire>>;
        expect((await a.contenders('x')).map((c) => c.node)).toEqual([second.node]);
        a.expireSession();
        const [one, two] = [first, second].map((h) => h.signal.reason.cause as ZkSessionLostError);
        expect(one.sessionId).toMatch(/^[0-9a-f]{16}$/);
        expect(two.sessionId).not.toBe(one.sessionId);
        await (await a.acquire('x', { timeoutMs: 0 })).release();
      });
    });
  });
});
