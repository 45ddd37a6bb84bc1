import { LockAbortedError, LockClientClosedError, LockTimeoutError, ZkLockError } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

describe('try, timeout, cancel and close', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('try')));
  afterAll(() => fx.cleanup());

  it('tryAcquire answers null at once when the lock is held, and leaves no node', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquire('t1');
    const before = b.client.counter.snapshot();
    expect(await b.tryAcquire('t1')).toBeNull();
    const after = b.client.counter.snapshot();
    // One create, one children read, then two deletes sent back to back: the node, and
    // the directory in case it fell empty (refused here: the holder is in it). No watch.
    expect([
      after.create - (before.create ?? 0),
      after.getChildren - (before.getChildren ?? 0),
      after.remove - (before.remove ?? 0),
    ]).toEqual([1, 1, 2]);
    expect(after.getData ?? 0).toBe(before.getData ?? 0);
    expect(await fx.nodes('t1')).toEqual([nodeOf(held)]);
    await held.release();
  });

  it('an abort landing as the grant is decided, past every await, rejects the acquire and leaves no node', async () => {
    const [a] = await fx.many(1);
    const { session } = a.client;
    const aborting = new AbortController();
    // The loop reads proofIsStale last before granting (its barrier): the abort lands there,
    // after the replies that decided the grant, where no await would notice it.
    Object.defineProperty(session, 'proofIsStale', {
      configurable: true,
      get: () => {
        aborting.abort(new Error('too late'));
        return false;
      },
    });
    try {
      const error = await a.acquire('t-late', { signal: aborting.signal }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAbortedError);
    } finally {
      delete (session as { proofIsStale?: boolean }).proofIsStale;
    }
    expect((await fx.nodes('t-late')) ?? []).toEqual([]);
  });

  it('tryAcquire grants a free lock', async () => {
    const [a] = await fx.many(1);
    const lock = await a.tryAcquire('t2', { mode: 'read' });
    expect(lock).not.toBeNull();
    expect(lock!.mode).toBe('read');
    expect(await fx.nodes('t2')).toHaveLength(1);
    await lock!.release();
  });

  it('acquire with timeoutMs 0 fails at once with LockTimeoutError when held', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquire('t3');
    const error = await b.acquire('t3', { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', lockName: 't3', timeoutMs: 0 });
    expect(await fx.nodes('t3')).toHaveLength(1);
    await held.release();
  });

  it('a timed-out acquire rejects with LockTimeoutError and leaves no node or watcher', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquire('t4');
    const error = await b.acquire('t4', { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as Error).message).toContain('t4');
    expect(await fx.nodes('t4')).toEqual([nodeOf(held)]);
    expect(b.client.session.watcherCount()).toBe(0);
    await held.release();
    expect(await fx.nodes('t4')).toBeNull();
  });

  it('an AbortSignal cancels a wait with LockAbortedError and leaves no node', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquire('t5');
    const controller = new AbortController();
    const waiting = b.acquire('t5', { signal: controller.signal }).catch((e: unknown) => e);
    await waitUntil(async () => (await fx.nodes('t5'))?.length === 2, 'the waiter queues');
    const reason = new Error('user gave up');
    controller.abort(reason);
    const error = await waiting;
    expect(error).toBeInstanceOf(LockAbortedError);
    expect((error as LockAbortedError).cause).toBe(reason);
    expect(await fx.nodes('t5')).toHaveLength(1);
    expect(b.client.session.watcherCount()).toBe(0);
    await held.release();
  });

  it('an already aborted signal sends nothing to ZooKeeper', async () => {
    const [a] = await fx.many(1);
    const before = a.client.counter.total();
    const error = await a.acquire('t6', { signal: AbortSignal.abort('no') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAbortedError);
    expect(a.client.counter.total()).toBe(before);
    expect(await fx.nodes('t6')).toBeNull();
  });

  it('release is idempotent and `await using` releases', async () => {
    const [a, b] = await fx.many(2);
    {
      await using lock = await a.acquire('t7');
      expect(lock.released).toBe(false);
      expect(await b.tryAcquire('t7')).toBeNull();
    }
    const again = await b.acquire('t7', { timeoutMs: 5000 });
    await Promise.all([again.release(), again.release()]);
    expect(again.released).toBe(true);
    expect(await fx.nodes('t7')).toBeNull();
  });

  it('close() cancels waits, releases held locks at once, and refuses new calls', async () => {
    const [a, b] = await fx.many(2);
    const held = await a.acquire('t8');
    const waiting = a.acquire('t9-other', { timeoutMs: 0 }).then((l) => l.release());
    await waiting;
    const otherHeld = await b.acquire('t9');
    const aWaits = a.acquire('t9').catch((e: unknown) => e);
    await waitUntil(async () => (await fx.nodes('t9'))?.length === 2, 'a queues on t9');
    const bWaits = b.acquire('t8', { timeoutMs: 10_000 });

    await a.close();
    expect(await aWaits).toBeInstanceOf(LockClientClosedError);
    expect(held.released).toBe(true);
    const got = await bWaits; // handed on at once, not after a session timeout
    expect(await fx.nodes('t9')).toHaveLength(1);
    await expect(a.acquire('t8')).rejects.toBeInstanceOf(LockClientClosedError);
    await Promise.all([got.release(), otherHeld.release()]);
  });
});
