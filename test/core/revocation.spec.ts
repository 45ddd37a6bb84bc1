import {
  InvalidOptionError,
  LockRevocationRequestedError,
  LockTimeoutError,
  ReentrantLocker,
  type LockHandle,
  type ZkLockBackend,
  type ZkLockHandle,
} from '../../lib/index';
import { closeRawClient, openRawClient } from '../harness/raw-client';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkConnect, zkPort } from '../support/zk-test-env';

/** The requests `work` sends on `backend`'s session (not the liveness heartbeat), by operation. */
async function requestsOf(backend: ZkLockBackend, work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = backend.client.counter.snapshot();
  await work();
  const after = backend.client.counter.snapshot();
  return Object.fromEntries(
    Object.keys(after)
      .filter((op) => op !== 'heartbeat' && after[op] !== (before[op] ?? 0))
      .map((op) => [op, after[op] - (before[op] ?? 0)]),
  );
}

/** ZooKeeper's own table of watches under a lock's directory: watched path -> sessions. */
const watchesIn = async (backend: ZkLockBackend, name: string): Promise<Record<string, number>> =>
  Object.fromEntries(await watchedPaths(zkPort(), `${backend.pathOf(name)}/`));

const revoked = (lock: LockHandle): Promise<void> =>
  waitUntil(() => lock.revocation.aborted, `${lock.name}'s revocation to abort`);

/** Curator's `Revoker.attemptRevoke`, done by hand: `__REVOKE__` written into one node, any version. */
async function rawSetData(path: string, data: string): Promise<void> {
  const { client } = await openRawClient(zkConnect());
  try {
    await new Promise<void>((resolve, reject) =>
      client.setData(path, Buffer.from(data), -1, (error) => (error ? reject(error) : resolve())),
    );
  } finally {
    await closeRawClient(client);
  }
}

describe('revocation (Curator makeRevocable / Revoker.attemptRevoke) on ZooKeeper', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('revocation')));
  afterAll(() => fx.cleanup());

  it("a revocable holder's revocation aborts when another client asks; its node reads __REVOKE__ and the lock stays held", async () => {
    const [a, b] = await fx.many(2);
    const lock = await a.acquire('asked', { revocable: true });
    // The watch is in place when acquire resolves: ZooKeeper lists it for the holder's node.
    expect(await watchesIn(a, 'asked')).toEqual({ [lock.path]: 1 });
    expect(lock.revocation.aborted).toBe(false);

    await expect(b.requestRevocation('asked')).resolves.toBe(1);
    await revoked(lock);
    const reason = lock.revocation.reason as LockRevocationRequestedError;
    expect(reason).toBeInstanceOf(LockRevocationRequestedError);
    expect(reason).toMatchObject({
      code: 'LOCK_REVOCATION_REQUESTED',
      lockName: 'asked',
      name: 'LockRevocationRequestedError',
    });
    expect(reason.message).toContain('Lock "asked"');
    expect(await fx.inspector.data(lock.path)).toBe('__REVOKE__');

    // Cooperative: nothing was taken away.
    expect(lock.isHeld()).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    expect(await fx.nodes('asked')).toEqual([nodeOf(lock)]);
    expect(await b.tryAcquire('asked')).toBeNull();
    expect((await b.contenders('asked')).map((c) => c.identity)).toEqual(['__REVOKE__']);
    await lock.release();
    await lock.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(a, 'asked')).toEqual({});
  });

  it('a lock that is not revocable costs nothing: no watch, no request, and a request reaches only its node data', async () => {
    const [a, b] = await fx.many(2);
    const hot = await fx.backend({ emptyDirectoryGraceMs: 60_000 }); // the directory stays between cycles
    await (await hot.acquire('free-cost')).release();
    const plainCost = await requestsOf(hot, async () => {
      const lock = await hot.acquire('free-cost');
      expect(await watchesIn(hot, 'free-cost')).toEqual({});
      expect(hot.client.session.watcherCount()).toBe(0);
      await lock.release();
      await lock.releaseConfirmed;
    });
    expect(plainCost).toEqual({ create: 1, getChildren: 1, remove: 1 });
    const revocableCost = await requestsOf(hot, async () => {
      const lock = await hot.acquire('free-cost', { revocable: true });
      await lock.release();
      await lock.releaseConfirmed;
    });
    // One read that sets the watch; the release's delete fires it (ZooKeeper sends the
    // notification before the delete's reply), which is how it ends.
    expect(revocableCost).toEqual({ create: 1, getChildren: 1, getData: 1, remove: 1, notification: 1 });

    // A plain reader and a revocable reader hold together, in one session, in that order.
    const plain = await a.acquire('plain', { mode: 'read' });
    const control = await a.acquire('plain', { mode: 'read', revocable: true });
    expect(await watchesIn(a, 'plain')).toEqual({ [control.path]: 1 });
    const notificationsBefore = a.client.counter.snapshot().notification ?? 0;

    await expect(b.requestRevocation('plain')).resolves.toBe(2);
    // Both writes commit in queue order and ZooKeeper notifies in commit order: once the
    // revocable reader has heard, a watch on the plain reader's node would have fired first.
    await revoked(control);
    expect(plain.revocation.aborted).toBe(false);
    expect((a.client.counter.snapshot().notification ?? 0) - notificationsBefore).toBe(1);
    expect(await fx.inspector.data(plain.path)).toBe('__REVOKE__');
    expect(plain.isHeld()).toBe(true);
    // The plain holder's identity is overwritten: contenders() shows the request instead.
    expect((await b.contenders('plain')).map((c) => c.identity)).toEqual(['__REVOKE__', '__REVOKE__']);
    await Promise.all([plain.release(), control.release()]);
    expect(plain.revocation.aborted).toBe(false); // a signal of its own that never aborts
  });

  it('a free lock has nobody to ask: 0, and nothing is created', async () => {
    const [a, b] = await fx.many(2);
    const cost = await requestsOf(b, async () => expect(await b.requestRevocation('nobody')).toBe(0));
    expect(cost).toEqual({ getChildren: 1 });
    expect(await fx.nodes('nobody')).toBeNull();
    await (await a.acquire('nobody')).release(); // taken and given back: free again
    await expect(b.requestRevocation('nobody')).resolves.toBe(0);
  });

  it('asks every holder (all the readers) and no waiter; a waiter granted later was never asked', async () => {
    const [r1, r2, r3, w, r4] = await fx.many(5);
    const readers = [
      await r1.acquire('readers', { mode: 'read', revocable: true }),
      await r2.acquire('readers', { mode: 'read', revocable: true }),
      await r3.acquire('readers', { mode: 'read', revocable: true }),
    ];
    const writer = w.acquire('readers', { revocable: true, timeoutMs: 10_000 });
    await fx.queued('readers', 4);
    const lateReader = r4.acquire('readers', { mode: 'read', revocable: true, timeoutMs: 10_000 });
    await fx.queued('readers', 5);

    await expect(w.requestRevocation('readers')).resolves.toBe(3);
    await Promise.all(readers.map(revoked));
    const identities = (await w.contenders('readers')).map((c) => [c.mode, c.holding, c.identity === '__REVOKE__']);
    expect(identities).toEqual([
      ['read', true, true],
      ['read', true, true],
      ['read', true, true],
      ['write', false, false],
      ['read', false, false],
    ]);

    await Promise.all(readers.map((lock) => lock.release()));
    const granted = await writer;
    expect(granted.revocation.aborted).toBe(false);
    expect(await fx.inspector.data((granted as ZkLockHandle).path)).not.toBe('__REVOKE__');
    await granted.release();
    await (await lateReader).release();
  });

  it('the watch goes with the release, after a request and after other data changes alike, on the server and in the client', async () => {
    const [a] = await fx.many(1);
    const quiet = await a.acquire('watch-gone', { revocable: true });
    expect(await watchesIn(a, 'watch-gone')).toEqual({ [quiet.path]: 1 });
    await quiet.release();
    await quiet.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(a, 'watch-gone')).toEqual({});
    expect(a.client.session.watcherCount()).toBe(0);

    const asked = await a.acquire('watch-gone', { revocable: true });
    await a.requestRevocation('watch-gone');
    await revoked(asked);
    await asked.release();
    await asked.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(a, 'watch-gone')).toEqual({});
    expect(a.client.session.watcherCount()).toBe(0);
  });

  it('a change to something else re-arms the watch; a later __REVOKE__ still reaches the holder', async () => {
    const [a] = await fx.many(1);
    const lock = await a.acquire('rearm', { revocable: true });
    const reads = a.client.counter.snapshot().getData ?? 0;
    await rawSetData(lock.path, 'not a request');
    // Re-read (and re-watched) after the change; not a request, so nothing aborts.
    await waitUntil(() => (a.client.counter.snapshot().getData ?? 0) === reads + 1, 'the holder to re-read its node');
    await waitUntil(async () => (await watchesIn(a, 'rearm'))[lock.path] === 1, 'the watch to be set again');
    expect(lock.revocation.aborted).toBe(false);
    expect(a.client.session.watcherCount()).toBe(1);

    await rawSetData(lock.path, '__REVOKE__');
    await revoked(lock);
    await lock.release();
    await lock.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(a, 'rearm')).toEqual({});
  });

  it("a raw setData of __REVOKE__ (Curator's Revoker) reaches our holder; also one written before the grant", async () => {
    const [a, b] = await fx.many(2);
    const lock = await a.acquire('curator', { revocable: true });
    await rawSetData(lock.path, '__REVOKE__');
    await revoked(lock);

    // A revoker may see a node as the holder before its owner does, and write first: the
    // read that sets the watch finds the request.
    const waiting = b.acquire('curator', { revocable: true, timeoutMs: 10_000 });
    await fx.queued('curator', 2);
    const waiterNode = (await fx.nodes('curator'))!.find((node) => node !== nodeOf(lock))!;
    await rawSetData(`${b.pathOf('curator')}/${waiterNode}`, '__REVOKE__');
    await lock.release();
    const next = await waiting;
    expect(next.revocation.aborted).toBe(true);
    expect(next.revocation.reason).toBeInstanceOf(LockRevocationRequestedError);
    await next.release();
    await next.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(b, 'curator')).toEqual({});
  });

  it('revocable flows through ReentrantLocker: withLock, acquire and tryAcquire; a nested hold shares the outer revocation', async () => {
    const [a, b] = await fx.many(2);
    const locker = new ReentrantLocker(a, 10_000);
    const result = await locker.withLock(
      'locker',
      async (lock) => {
        const nested = await locker.acquire('locker', { mode: 'read' });
        await b.requestRevocation('locker');
        await revoked(lock);
        expect(nested.revocation).toBe(lock.revocation);
        await nested.release();
        return 'stopped early';
      },
      { revocable: true },
    );
    expect(result).toBe('stopped early');

    const acquired = await locker.acquire('locker', { revocable: true });
    expect(await watchesIn(a, 'locker')).toEqual({ [(acquired as ZkLockHandle).path]: 1 });
    await acquired.release();
    const tried = (await locker.tryAcquire('locker', { revocable: true }))!;
    await b.requestRevocation('locker');
    await revoked(tried);
    await tried.release();
    await tried.releaseConfirmed; // the server's watch table after the delete
    expect(await watchesIn(a, 'locker')).toEqual({});
  });

  it('a lost session takes the watch with it', async () => {
    const a = await fx.expirable();
    const lock = await a.acquire('expired', { revocable: true });
    const session = a.client.session;
    expect(await watchesIn(a, 'expired')).toEqual({ [lock.path]: 1 });
    await fx.expire(a);
    await waitUntil(() => lock.signal.aborted, 'the holder to learn its lock is lost');
    expect(await watchesIn(a, 'expired')).toEqual({});
    expect(session.watcherCount()).toBe(0);
    expect(lock.revocation.aborted).toBe(false);
    await lock.release();
  });

  it("a grant whose revocation watch is answered past the call's deadline: LockTimeoutError at the deadline, never a late grant, no node left", async () => {
    const [a, b] = await fx.many(2);
    const timeoutMs = 1_500;
    const held = await a.acquire('late-watch');
    // The read that sets the watch on its own node, once the node holds, is answered only after the deadline.
    const session = b.client.session;
    const read = session.watchDataValue.bind(session);
    let deadlinePassed!: () => void;
    const gate = new Promise<void>((resolve) => (deadlinePassed = resolve));
    let watchAskedAt: number | undefined;
    const spy = jest.spyOn(session, 'watchDataValue').mockImplementation(async (path, listener) => {
      watchAskedAt ??= performance.now();
      await gate;
      return read(path, listener);
    });
    try {
      const calledAt = performance.now();
      const outcome = b.acquire('late-watch', { revocable: true, timeoutMs }).then(
        (lock) => ({ lock, at: performance.now() }),
        (error: unknown) => ({ error, at: performance.now() }),
      );
      await fx.queued('late-watch', 2);
      await held.release();
      await waitUntil(() => watchAskedAt !== undefined, 'its node to hold and the watch to be asked');
      expect(watchAskedAt! - calledAt).toBeLessThan(timeoutMs); // granted by ZooKeeper in time
      // The acquire's own clock starts a little after `calledAt`: the answer is let through
      // well past its deadline, unless the acquire settled first.
      let settled = false;
      void outcome.then(() => (settled = true));
      await waitUntil(() => settled || performance.now() - calledAt > timeoutMs + 500, 'the deadline to pass');
      deadlinePassed();
      const result = await outcome;
      if ('lock' in result) await result.lock.release();
      expect('lock' in result && `granted ${Math.round(result.at - calledAt)} ms after the call`).toBe(false);
      expect('error' in result && result.error).toBeInstanceOf(LockTimeoutError);
    } finally {
      deadlinePassed();
      spy.mockRestore();
    }
    expect((await fx.nodes('late-watch')) ?? []).toEqual([]);
    await waitUntil(() => session.watcherCount() === 0, 'no watch left in the client');
    expect(await watchesIn(b, 'late-watch')).toEqual({});
  });

  it('refuses a revocable option that is not a boolean, before anything is sent', async () => {
    const [a] = await fx.many(1);
    const cost = await requestsOf(a, async () => {
      await expect(a.acquire('bad', { revocable: 'yes' as unknown as boolean })).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
      await expect(a.tryAcquire('bad', { revocable: 1 as unknown as boolean })).rejects.toThrow(
        /revocable=1: expected true or false/,
      );
    });
    expect(cost).toEqual({});
    expect(await fx.nodes('bad')).toBeNull();
  });

  it('nodes of another recipe in the directory are left alone (a Curator leader latch is not a lock holder)', async () => {
    const [a, b] = await fx.many(2);
    const lock = await a.acquire('mixed');
    // Curator's lock nodes are holders like ours (test/interop/curator.spec.ts); a latch node is not a lock at all.
    const foreign = `${a.pathOf('mixed')}/_c_0b1e2f30-0000-4000-8000-000000000000-latch-0000000000`;
    await fx.inspector.create(foreign, 'curator');
    await expect(b.requestRevocation('mixed')).resolves.toBe(1);
    expect(await fx.inspector.data(foreign)).toBe('curator');
    await fx.inspector.removeTree(foreign);
    await lock.release();
  });
});
