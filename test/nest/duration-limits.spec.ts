import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { setTimeout as sleep } from 'node:timers/promises';

import { InvalidOptionError, LockService, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index';
import { OverlongTimers } from '../support/overlong-timers';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { backendOf } from './nest-fixture';

/** How long each test watches for an early fire (a plain setTimeout past 2^31 - 1 ms fires after 1 ms). */
const WATCH_MS = 200;

/** The module's own duration options at the largest value each accepts. */
describe('ZkLockModule: duration options at their maximum', () => {
  const root = uniqueRoot('nest-duration-limits');
  let inspector: ZkInspector;
  beforeAll(async () => (inspector = await ZkInspector.connect(zkConnect())));
  afterAll(async () => {
    await inspector.removeTree(root);
    await inspector.close();
  });
  // Node cuts a delay past its range to 1 ms, with a TimeoutOverflowWarning: no test here arms one.
  let overlong: OverlongTimers;
  beforeEach(() => (overlong = new OverlongTimers()));
  afterEach(() => expect(overlong.stop()).toEqual([]));

  const start = async (options: Partial<ZkLockModuleOptions>) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0, ...options }),
      ],
    }).compile();
    moduleRef.useLogger(false);
    return moduleRef.init();
  };

  it.each([
    ['2^31 ms', 2 ** 31],
    ['Number.MAX_SAFE_INTEGER, the largest accepted', Number.MAX_SAFE_INTEGER],
  ])('shutdownGraceMs %s: close() waits for the running body, and the lock stays held under it', async (_label, ms) => {
    const app = await start({ shutdownGraceMs: ms });
    const name = `monthly-${ms}`;
    const dir = backendOf(app).pathOf(name);
    let finish!: () => void;
    let signal: AbortSignal | undefined;
    const body = app.get(LockService).withLock(name, async (lock) => {
      signal = lock.signal;
      await new Promise<void>((resolve) => (finish = resolve));
      return 'done';
    });
    await waitUntil(async () => (await inspector.children(dir))?.length === 1, 'the body holds the lock');
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await sleep(WATCH_MS);
    expect(closed).toBe(false);
    expect(signal!.aborted).toBe(false);
    expect(await inspector.children(dir)).toHaveLength(1);
    finish();
    await expect(body).resolves.toBe('done');
    await closing;
    expect(signal!.aborted).toBe(false); // released after it ended, not under it
    expect(await inspector.children(dir)).toBeNull();
  });

  it('shutdownGraceMs one past the maximum is refused, naming it', async () => {
    const error = await start({ shutdownGraceMs: Number.MAX_SAFE_INTEGER + 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain(`a whole number of milliseconds from 0 to ${Number.MAX_SAFE_INTEGER}`);
  });

  it('acquireTimeoutMs Number.MAX_VALUE (the largest finite): a call without timeoutMs waits, then gets the lock', async () => {
    const [holder, waiter] = await Promise.all([start({}), start({ acquireTimeoutMs: Number.MAX_VALUE })]);
    try {
      const held = await holder.get(LockService).acquire('acquire-max');
      let settled = false;
      const waiting = waiter
        .get(LockService)
        .acquire('acquire-max')
        .finally(() => (settled = true));
      const dir = backendOf(holder).pathOf('acquire-max');
      await waitUntil(async () => (await inspector.children(dir))?.length === 2, 'the waiter queues');
      await sleep(WATCH_MS);
      expect(settled).toBe(false);
      await held.release();
      const lock = await waiting;
      expect(await inspector.children(dir)).toHaveLength(1);
      await lock.release();
    } finally {
      await holder.close();
      await waiter.close();
    }
  });
});
