import { setTimeout as sleep } from 'node:timers/promises';

import type { LockBackend, LockMode } from '../../../lib/index';
import { OverlapMeter, queued, queueShape } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function exclusionCases(ctx: ConformanceContext): void {
  it('never lets two writers in among many concurrent acquirers, and tokens rise in grant order', async () => {
    const name = ctx.name('mutex');
    const clients = await ctx.world.backends(4);
    const meter = new OverlapMeter();
    const tokens: bigint[] = [];
    let counter = 0;
    const loop = async (client: LockBackend): Promise<void> => {
      for (let i = 0; i < 5; i++) {
        const lock = await client.acquire(name, { timeoutMs: 20_000 });
        meter.enter('write');
        tokens.push(lock.fencingToken);
        const read = counter;
        await sleep(1); // a lost update shows if anyone else is inside now
        counter = read + 1;
        meter.leave('write');
        await lock.release();
      }
    };
    // 4 clients x 3 concurrent callers each: 12 contenders, 60 critical sections.
    await Promise.all(clients.flatMap((client) => [loop(client), loop(client), loop(client)]));

    expect(meter.violations).toEqual([]);
    expect(counter).toBe(60);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  });

  it('mixes readers and writers under contention without a writer ever sharing', async () => {
    const name = ctx.name('mixed');
    const clients = await ctx.world.backends(3);
    const meter = new OverlapMeter();
    const loop = async (client: LockBackend, modes: LockMode[]): Promise<void> => {
      for (const mode of modes) {
        const lock = await client.acquire(name, { mode, timeoutMs: 20_000 });
        meter.enter(mode);
        await sleep(5);
        meter.leave(mode);
        await lock.release();
      }
    };
    const readHeavy: LockMode[] = ['read', 'read', 'write', 'read', 'read', 'read'];
    await Promise.all(clients.flatMap((client) => [loop(client, readHeavy), loop(client, [...readHeavy].reverse())]));

    expect(meter.violations).toEqual([]);
    expect(meter.maxReaders).toBeGreaterThan(1); // readers did share
  });

  it('two acquires through one client exclude each other: the backend itself is not reentrant', async () => {
    const name = ctx.name('same-client');
    const [a] = await ctx.world.backends(1);
    const first = await a.acquire(name);
    expect(await a.tryAcquire(name)).toBeNull();
    const second = a.acquire(name, { timeoutMs: 10_000 });
    await queued(a, name, 2);
    expect(await queueShape(a, name)).toEqual([
      ['write', true],
      ['write', false],
    ]);
    await first.release();
    await (await second).release();
  });

  it('grants waiters in the order they queued (FIFO)', async () => {
    const name = ctx.name('fifo');
    const [holderClient, ...clients] = await ctx.world.backends(5);
    const holder = await holderClient.acquire(name);
    const order: number[] = [];
    const waits: Array<Promise<void>> = [];
    for (const [i, client] of clients.entries()) {
      const mode: LockMode = i === 2 ? 'read' : 'write';
      waits.push(
        client.acquire(name, { mode, timeoutMs: 20_000 }).then(async (lock) => {
          order.push(i);
          await lock.release();
        }),
      );
      await queued(holderClient, name, i + 2); // the next one queues strictly after this one
    }
    await holder.release();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3]);
  });
}
