import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import {
  InMemoryLockBackend,
  InMemoryLockStore,
  LockService,
  LockTimeoutError,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type ZkLockBackend,
} from '../../lib/index';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/**
 * `acquireTimeoutMs` left out: twice the session timeout, the one the server granted (see
 * test/faults/crash-default-timeout.spec.ts for why twice); in `forTesting()`, twice
 * ZooKeeper's default session, as production waits with the default options.
 */
describe('the default acquireTimeoutMs', () => {
  const apps: INestApplicationContext[] = [];
  afterEach(async () => {
    jest.useRealTimers();
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('forRoot: twice the session timeout the server granted, not the one asked for', async () => {
    const rootPath = uniqueRoot('default-acquire');
    const boot = async () => {
      // The suite's server (tickTime 200) grants 4 s to the 10 s asked for by default.
      const moduleRef = await Test.createTestingModule({
        imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0 })],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      apps.push(app);
      return app;
    };
    const [holder, waiter] = await Promise.all([boot(), boot()]);
    expect(waiter.get<ZkLockBackend>(ZK_LOCK_BACKEND).status().timeoutMs).toBe(4000);
    const held = await holder.get(LockService).acquire('job');
    const error = await waiter
      .get(LockService)
      .withLock('job', () => 'ran')
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ lockName: 'job', timeoutMs: 8000 });
    await held.release();
  });

  it('forTesting: 20 s, twice the 10 s session a default forRoot gets', async () => {
    const store = new InMemoryLockStore();
    const holder = new InMemoryLockBackend({ store });
    const moduleRef = await Test.createTestingModule({ imports: [ZkLockModule.forTesting({ store })] }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    apps.push(app);
    const held = await holder.acquire('job');
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
    let outcome: unknown;
    void app
      .get(LockService)
      .withLock('job', () => 'ran')
      .catch((error: unknown) => (outcome = error));
    await jest.advanceTimersByTimeAsync(19_999);
    expect(outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toMatchObject({ code: 'LOCK_TIMEOUT', timeoutMs: 20_000 });
    await held.release();
    await holder.close();
  });
});
