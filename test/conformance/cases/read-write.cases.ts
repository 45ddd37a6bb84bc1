import { queued, queueShape, track, turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function readWriteCases(ctx: ConformanceContext): void {
  it('lets readers hold together', async () => {
    const name = ctx.name('readers');
    const [a, b] = await ctx.world.backends(2);
    const r1 = await a.acquire(name, { mode: 'read', timeoutMs: 5000 });
    const r2 = await b.acquire(name, { mode: 'read', timeoutMs: 5000 });
    expect([r1.mode, r2.mode]).toEqual(['read', 'read']);
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['read', true],
    ]);
    await Promise.all([r1.release(), r2.release()]);
  });

  it('keeps a writer out until every reader has left, then lets it in', async () => {
    const name = ctx.name('writer-waits');
    const [a, b, c] = await ctx.world.backends(3);
    const r1 = await a.acquire(name, { mode: 'read' });
    const r2 = await b.acquire(name, { mode: 'read' });
    expect(await c.tryAcquire(name)).toBeNull();
    const writer = track(c.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 3);

    await r1.release();
    await queued(a, name, 2);
    await turns();
    expect(writer.granted()).toBe(false);
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['write', false],
    ]);

    await r2.release();
    const w = await writer.result;
    expect(w.mode).toBe('write');
    expect(await queueShape(a, name)).toEqual([['write', true]]);
    await w.release();
  });

  it('queues a reader behind a waiting writer (writers do not starve)', async () => {
    const name = ctx.name('no-starve');
    const [a, b, c] = await ctx.world.backends(3);
    const r1 = await a.acquire(name, { mode: 'read' });
    const writer = track(b.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 2);
    const reader = track(c.acquire(name, { mode: 'read', timeoutMs: 10_000 }));
    await queued(a, name, 3);
    await turns();
    expect(reader.granted()).toBe(false);
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['write', false],
      ['read', false],
    ]);

    await r1.release();
    const w = await writer.result;
    await turns();
    expect(reader.granted()).toBe(false);
    await w.release();
    await (await reader.result).release();
  });

  it('blocks a reader only on the nearest writer ahead of it, never on one behind', async () => {
    const name = ctx.name('nearest-writer');
    const [a, b, c] = await ctx.world.backends(3);
    const w1 = await a.acquire(name);
    const reader = track(b.acquire(name, { mode: 'read', timeoutMs: 10_000 }));
    await queued(a, name, 2);
    const writer = track(c.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 3);

    await w1.release();
    const r = await reader.result;
    await turns();
    expect(writer.granted()).toBe(false);
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['write', false],
    ]);
    await r.release();
    await (await writer.result).release();
  });

  it('lets every reader between two writers in together when the first writer leaves', async () => {
    const name = ctx.name('reader-batch');
    const [a, b, c, d] = await ctx.world.backends(4);
    const w1 = await a.acquire(name);
    const r1 = track(b.acquire(name, { mode: 'read', timeoutMs: 10_000 }));
    await queued(a, name, 2);
    const r2 = track(c.acquire(name, { mode: 'read', timeoutMs: 10_000 }));
    await queued(a, name, 3);
    const w2 = track(d.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 4);

    await w1.release();
    const [h1, h2] = await Promise.all([r1.result, r2.result]);
    expect(await queueShape(a, name)).toEqual([
      ['read', true],
      ['read', true],
      ['write', false],
    ]);
    expect(w2.granted()).toBe(false);
    await Promise.all([h1.release(), h2.release()]);
    await (await w2.result).release();
  });
}
