import 'reflect-metadata';
import { Controller, Get, Injectable, Param, type INestApplication } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';

import { LockReentryError, LockService, LockUpgradeError, WithLock } from '../../lib/index';
import { backendOf, lockNodes, startApp } from './nest-fixture';

@Injectable()
class Inventory {
  inside = 0;
  maxInside = 0;

  constructor(readonly locks: LockService) {}

  @WithLock('inventory')
  async outer(inner: () => Promise<unknown>): Promise<unknown> {
    return inner();
  }

  @WithLock('inventory')
  async nested(): Promise<string> {
    return 'nested ran';
  }

  @WithLock('inventory', { mode: 'read' })
  async readNested(): Promise<string> {
    return 'read ran';
  }

  @WithLock('inventory', { reentrant: false })
  async ownNode(inner?: () => Promise<unknown>): Promise<unknown> {
    return inner?.();
  }

  @WithLock('inventory')
  async exclusiveSection(): Promise<void> {
    this.inside++;
    this.maxInside = Math.max(this.maxInside, this.inside);
    await sleep(30);
    this.inside--;
  }
}

@Controller()
class InventoryController {
  constructor(private readonly inventory: Inventory) {}

  @Get('section/:n')
  async section(@Param('n') n: string): Promise<string> {
    await this.inventory.exclusiveSection();
    return n;
  }
}

describe('reentrancy per async call chain', () => {
  let app: INestApplication;
  let inventory: Inventory;
  let locks: LockService;
  const creates = (): number => backendOf(app).client.counter.snapshot().create ?? 0;

  beforeAll(async () => {
    app = await startApp({ providers: [Inventory], controllers: [InventoryController] });
    inventory = app.get(Inventory);
    locks = app.get(LockService);
  });
  afterAll(() => app.close());

  it('taking a held lock again creates no node and does not wait', async () => {
    await locks.withLock('warm-up', () => undefined); // the root exists now
    const before = creates();
    const result = await inventory.outer(async () => {
      const createsInside = creates();
      const nodesInside = await lockNodes(app, 'inventory');
      const again = await locks.withLock(
        'inventory',
        async (handle) => {
          expect(handle.fencingToken).toBe(locks.held('inventory')!.fencingToken);
          return (await lockNodes(app, 'inventory'))!.length;
        },
        { timeoutMs: 0 },
      );
      const acquired = await locks.acquire('inventory', { timeoutMs: 0 });
      await acquired.release(); // a reentrant handle: the outer grant stays
      const nested = await inventory.nested();
      return {
        nodesInside: nodesInside!.length,
        again,
        nested,
        stillHeld: (await lockNodes(app, 'inventory'))!.length,
        innerCreates: creates() - createsInside,
      };
    });
    expect(result).toEqual({ nodesInside: 1, again: 1, nested: 'nested ran', stillHeld: 1, innerCreates: 0 });
    // The outer grant: a create refused for want of the directory, the directory, the node.
    expect(creates() - before).toBe(3);
    expect(await lockNodes(app, 'inventory')).toBeNull();
  });

  it('deletes the node when the outermost holder exits, also when an inner holder throws', async () => {
    const error = await inventory
      .outer(async () => {
        await inventory.outer(async () => {
          throw new Error('inner failed');
        });
      })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('inner failed');
    expect(await lockNodes(app, 'inventory')).toBeNull();
    expect(locks.held('inventory')).toBeUndefined();
  });

  it('grants read inside write (downgrade) and refuses write inside read at once', async () => {
    await expect(inventory.outer(() => inventory.readNested())).resolves.toBe('read ran');
    const before = creates();
    const error = await locks
      .withLock('inventory', () => inventory.nested(), { mode: 'read' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockUpgradeError);
    expect((error as Error).message).toMatch(/held for read/);
    expect(creates() - before).toBe(3); // for the read grant only (see above); none for the refused write
    expect(await lockNodes(app, 'inventory')).toBeNull();
  });

  it('@WithLock(…, { reentrant: false }) called where the lock is held fails at once with LockReentryError; outside, it takes its own node', async () => {
    const before = creates();
    const error = await inventory.outer(() => inventory.ownNode()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockReentryError);
    expect(creates() - before).toBe(3); // the outer grant only (see above)
    await expect(inventory.ownNode(() => inventory.nested())).resolves.toBe('nested ran'); // reentrant calls inside join it
    expect(await lockNodes(app, 'inventory')).toBeNull();
  });

  it('separate calls are separate contexts: Promise.all branches started outside exclude each other', async () => {
    inventory.maxInside = 0;
    const before = creates();
    await Promise.all([inventory.exclusiveSection(), inventory.exclusiveSection(), inventory.exclusiveSection()]);
    expect(inventory.maxInside).toBe(1);
    expect(creates() - before).toBeGreaterThanOrEqual(3); // one node per branch
  });

  it('two HTTP requests in one process exclude each other', async () => {
    inventory.maxInside = 0;
    const server = app.getHttpServer();
    const replies = await Promise.all([1, 2, 3, 4].map((n) => request(server).get(`/section/${n}`)));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(inventory.maxInside).toBe(1);
  });

  it('work the holder did not await takes the lock for itself once the holder is gone', async () => {
    let detached!: Promise<number>;
    await locks.withLock('detached', async () => {
      detached = sleep(30).then(() =>
        locks.withLock('detached', async () => (await lockNodes(app, 'detached'))!.length),
      );
    });
    expect(await detached).toBe(1); // its own node, taken after the outer grant ended
  });
});
