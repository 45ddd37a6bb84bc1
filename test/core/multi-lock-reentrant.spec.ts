import { setTimeout as sleep } from 'node:timers/promises';

import { LockOrderError, LockUpgradeError, ReentrantLocker, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { waitUntil } from '../support/wait-until';

describe('ReentrantLocker.withLocks / acquireAll on ZooKeeper: reentrancy per call chain', () => {
  let fx: LockFixture;
  let backend: ZkLockBackend;
  let locker: ReentrantLocker;
  let n = 0;
  /** `count` new names whose directories exist already. */
  const names = async (count: number): Promise<string[]> => {
    n++;
    const list = Array.from({ length: count }, (_, i) => `r${n}-${String.fromCharCode(97 + i)}`);
    await (await backend.acquireAll(list)).release();
    return list;
  };
  const nodeCounts = (list: string[]): Promise<number[]> =>
    Promise.all(list.map(async (name) => (await fx.nodes(name))?.length ?? 0));

  beforeAll(async () => {
    fx = await LockFixture.create('multi-reentrant');
    // Directories stay between calls (a long grace), so requests count lock nodes only.
    backend = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    await backend.client.liveSession().readyToReadTogether(); // the server said it takes a multiRead
    locker = new ReentrantLocker(backend, 10_000);
  });
  afterAll(() => fx.cleanup());

  it('joined names create no node: only the names the chain does not hold are sent', async () => {
    const [a, b, c] = await names(3);
    const seen = await locker.withLock(a, async (outer) => {
      const before = backend.client.counter.snapshot();
      return locker.withLocks([c, b, a], async (group) => ({
        sent: countsSince(backend, before),
        nodes: await nodeCounts([a, b, c]),
        joinedToken: group.handles[0].fencingToken,
        outerToken: outer.fencingToken,
      }));
    });
    expect(seen.sent).toEqual({ multi: 1, multiRead: 1 }); // b and c, their creates one transaction, their reads one; a joined
    expect(seen.nodes).toEqual([1, 1, 1]);
    expect(seen.joinedToken).toBe(seen.outerToken);
    expect(await nodeCounts([a, b, c])).toEqual([0, 0, 0]);
  });

  it('nested withLock, acquire and withLocks of names it holds are reentrant: nothing sent', async () => {
    const [a, b] = await names(2);
    const seen = await locker.withLocks([a, b], async () => {
      const before = backend.client.counter.snapshot();
      await locker.withLock(b, async () => {
        const inner = await locker.acquire(a, { mode: 'read', timeoutMs: 0 });
        await inner.release();
      });
      await locker.withLocks([b, { name: a, mode: 'read' }], () => undefined, { timeoutMs: 0 });
      return { sent: countsSince(backend, before), nodes: await nodeCounts([a, b]) };
    });
    expect(seen.sent).toEqual({});
    expect(seen.nodes).toEqual([1, 1]);
    expect(await nodeCounts([a, b])).toEqual([0, 0]);
  });

  it('write asked where the chain holds read fails at once, sending nothing', async () => {
    const [a, b] = await names(2);
    const seen = await locker.withLock(
      b,
      async () => {
        const before = backend.client.counter.snapshot();
        const error = await locker.acquireAll([a, b]).catch((e: unknown) => e);
        return { error, sent: countsSince(backend, before), nodes: await nodeCounts([a, b]) };
      },
      { mode: 'read' },
    );
    expect(seen.error).toBeInstanceOf(LockUpgradeError);
    expect(seen.error).toMatchObject({ lockName: b });
    expect(seen.sent).toEqual({});
    expect(seen.nodes).toEqual([0, 1]);
  });

  it('a multi-lock out of order with the locks held is refused before anything is sent', async () => {
    const [a, b, z] = await names(3).then((list) => [list[0], list[1], `${list[1]}-z`]);
    const seen = await locker.withLock(z, () =>
      locker.withLock(b, async () => {
        const before = backend.client.counter.snapshot();
        const errors = [
          await locker.withLocks([a, b], () => 'never').catch((e: unknown) => e), // b joined, a before it
          await locker.acquireAll([{ name: a, mode: 'read' }]).catch((e: unknown) => e), // z and b held, not listed
          await locker.withLocks([a], () => 'never', { ifLocked: 'skip' }).catch((e: unknown) => e), // not a skip
        ];
        return { errors, sent: countsSince(backend, before), nodes: await nodeCounts([a, b, z]) };
      }),
    );
    expect(seen.errors.map((error) => error instanceof LockOrderError)).toEqual([true, true, true]);
    expect(seen.errors[1]).toMatchObject({ heldNames: [b, z], missingNames: [a] });
    expect(seen.sent).toEqual({});
    expect(seen.nodes).toEqual([0, 1, 1]);
    expect(await nodeCounts([a, b, z])).toEqual([0, 0, 0]);
  });

  it('a group of joined names only: no request at all, and the outer grant outlives its release', async () => {
    const [a, b] = await names(2);
    await locker.withLocks([a, b], async () => {
      const before = backend.client.counter.snapshot();
      const inner = await locker.acquireAll([b, a], { timeoutMs: 0 });
      await inner.release();
      expect(countsSince(backend, before)).toEqual({});
      expect(await nodeCounts([a, b])).toEqual([1, 1]);
    });
    expect(await nodeCounts([a, b])).toEqual([0, 0]);
  });

  it('work the body started and did not await keeps the locks until it ends', async () => {
    const [a, b] = await names(2);
    let detached: Promise<void> | undefined;
    let detachedEnded = false;
    let nodesWhileDetached: number[] = [];
    await locker.withLocks([a, b], async () => {
      detached = locker.withLock(a, async () => {
        await sleep(100);
        nodesWhileDetached = await nodeCounts([a, b]);
        detachedEnded = true;
      });
    });
    // withLocks resolved once the nested hold ended; the nodes went after it, not before.
    expect(detachedEnded).toBe(true);
    expect(nodesWhileDetached).toEqual([1, 1]);
    expect(await nodeCounts([a, b])).toEqual([0, 0]);
    await detached;
  });

  it('drain() waits for a running withLocks body', async () => {
    const [a, b] = await names(2);
    let [started, ended] = [false, false];
    const running = locker.withLocks([a, b], async () => {
      started = true;
      await sleep(100);
      ended = true;
    });
    await waitUntil(() => started, 'the body to start');
    expect(await locker.drain(5_000)).toBe(true);
    expect(ended).toBe(true);
    await running;
  });
});
