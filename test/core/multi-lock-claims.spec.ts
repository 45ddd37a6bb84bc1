import { ZkLockGroupRequests, type ZkLockGroupContext } from '../../lib/core/zookeeper/multi';
import { planLocks } from '../../lib/core/multi/multi-lock-plan';
import type { LockHandle } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

/**
 * acquireAll sets up every lock's try before the group's multi leaves. A try that stops
 * before taking its create would leave its node to nobody, queued for as long as the
 * session lives: then the multi is not sent, and the other tries create their nodes alone.
 */
describe('acquireAll: a create is sent only for a try that took it', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('multi-claims')));
  afterAll(() => fx.cleanup());

  it('one try refused before its create: no multi, no node for it, the others create theirs alone', async () => {
    // Directories kept a while: the counts below are the nodes' requests only.
    const backend = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    await (await backend.acquireAll(['a', 'b', 'c'])).release(); // makes the directories and the backend's group requests
    const ctx = (backend as unknown as { groupRequests: { ctx: ZkLockGroupContext } }).groupRequests.ctx;
    const refusing = new ZkLockGroupRequests({
      ...ctx,
      pathOf: (name) => ctx.pathOf(name),
      started: () => ctx.started(),
      tryAcquire: (name, options, sent) =>
        name === 'b' ? Promise.reject(new Error('stopped before its create')) : ctx.tryAcquire(name, options, sent),
    });
    const before = backend.client.counter.snapshot();
    const results = await refusing.tryAll(
      planLocks(['a', 'b', 'c']),
      [0, 1, 2].map(() => new AbortController().signal),
      {},
    );

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const after = backend.client.counter.snapshot();
    expect((after.multi ?? 0) - (before.multi ?? 0)).toBe(0);
    expect((after.create ?? 0) - (before.create ?? 0)).toBe(2);
    expect((await fx.nodes('b')) ?? []).toEqual([]);
    expect(await fx.nodes('a')).toHaveLength(1);
    expect(await fx.nodes('c')).toHaveLength(1);
    const held = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value as LockHandle] : []));
    await Promise.all(held.map((handle) => handle.release()));
    for (const name of ['a', 'b', 'c']) expect(await fx.nodes(name)).toEqual([]);
  });

  it('every try took its create: one multi for all of them', async () => {
    const backend = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    await (await backend.acquireAll(['x', 'y', 'z'])).release();
    const before = backend.client.counter.snapshot();
    const group = await backend.acquireAll(['x', 'y', 'z']);
    const after = backend.client.counter.snapshot();
    expect((after.multi ?? 0) - (before.multi ?? 0)).toBe(1);
    expect((after.create ?? 0) - (before.create ?? 0)).toBe(0);
    await group.release();
  });
});
