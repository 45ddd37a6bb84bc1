import type { LockHandle } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

/** Starts an acquire and records when it is granted. */
function track(promise: Promise<LockHandle>): { granted: () => boolean; handle: Promise<LockHandle> } {
  let granted = false;
  const handle = promise.then((h) => ((granted = true), h));
  return { granted: () => granted, handle };
}

describe('shared (read) and exclusive (write) modes on one name', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('rw')));
  afterAll(() => fx.cleanup());

  it('lets readers hold together', async () => {
    const [a, b] = await fx.many(2);
    const r1 = await a.acquire('doc', { mode: 'read', timeoutMs: 5000 });
    const r2 = await b.acquire('doc', { mode: 'read', timeoutMs: 5000 });
    const contenders = await a.contenders('doc');
    expect(contenders.map((c) => [c.mode, c.holding])).toEqual([
      ['read', true],
      ['read', true],
    ]);
    await Promise.all([r1.release(), r2.release()]);
    expect(await fx.nodes('doc')).toBeNull();
  });

  it('keeps a writer out until every reader has left, then lets it in', async () => {
    const [a, b, c] = await fx.many(3);
    const r1 = await a.acquire('doc2', { mode: 'read' });
    const r2 = await b.acquire('doc2', { mode: 'read' });
    expect(await c.tryAcquire('doc2')).toBeNull();
    const writer = track(c.acquire('doc2', { timeoutMs: 10_000 }));
    await fx.queued('doc2', 3);

    await r1.release();
    await fx.queued('doc2', 2);
    expect(writer.granted()).toBe(false);
    expect((await a.contenders('doc2')).map((x) => [x.mode, x.holding])).toEqual([
      ['read', true],
      ['write', false],
    ]);

    await r2.release();
    const w = await writer.handle;
    expect((await a.contenders('doc2')).map((x) => [x.mode, x.holding])).toEqual([['write', true]]);
    await w.release();
  });

  it('queues a reader behind a waiting writer (writers do not starve)', async () => {
    const [a, b, c] = await fx.many(3);
    const r1 = await a.acquire('doc3', { mode: 'read' });
    const writer = track(b.acquire('doc3', { timeoutMs: 10_000 }));
    await fx.queued('doc3', 2);
    const reader = track(c.acquire('doc3', { mode: 'read', timeoutMs: 10_000 }));
    await fx.queued('doc3', 3);
    expect(reader.granted()).toBe(false);

    await r1.release();
    const w = await writer.handle;
    expect(reader.granted()).toBe(false);
    await w.release();
    await (await reader.handle).release();
  });

  it('blocks a reader only on the nearest lower writer, never on a higher one', async () => {
    const [a, b, c] = await fx.many(3);
    const w1 = await a.acquire('doc4');
    const reader = track(b.acquire('doc4', { mode: 'read', timeoutMs: 10_000 }));
    await fx.queued('doc4', 2);
    const writer = track(c.acquire('doc4', { timeoutMs: 10_000 }));
    await fx.queued('doc4', 3);

    // ZooKeeper's own watch table: the reader watches the first writer, the second writer
    // watches the reader, and nobody watches anything else in this lock.
    const [first, second] = (await fx.nodes('doc4'))!.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
    const dir = a.pathOf('doc4');
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 2, 'both waiters watch');
    expect(Object.fromEntries(await watchedPaths(zkPort(), dir))).toEqual({
      [`${dir}/${first}`]: 1,
      [`${dir}/${second}`]: 1,
    });

    await w1.release();
    const r = await reader.handle;
    expect(writer.granted()).toBe(false);
    await r.release();
    await (await writer.handle).release();
  });
});
