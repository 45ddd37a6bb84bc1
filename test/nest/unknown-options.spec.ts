import 'reflect-metadata';
import { Test } from '@nestjs/testing';

import { InvalidOptionError, LockService, WithLock, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/** A typo in an option name used to do nothing at all; now it stops the call (or the start-up) and names the option meant. */
describe('unknown options are refused, naming the closest known one', () => {
  const start = (imports: unknown[]) => Test.createTestingModule({ imports: imports as never[] }).compile();
  const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  it("forRoot, and forRootAsync's factory result: the module does not start", async () => {
    const options = {
      connectionString: zkConnect(),
      rootPath: uniqueRoot('unknown-options'),
      sessionTimeout: 4000,
    } as ZkLockModuleOptions;
    for (const module of [ZkLockModule.forRoot(options), ZkLockModule.forRootAsync({ useFactory: () => options })]) {
      const error = await rejectionOf(start([module]));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'sessionTimeout', value: 4000 });
      expect((error as Error).message).toMatch(
        /an option ZkLockModule\.forRoot knows: .*acquireTimeoutMs.*did you mean "sessionTimeoutMs"\?/,
      );
    }
  });

  it("isGlobal and the module's own options are known", async () => {
    const moduleRef = await start([
      ZkLockModule.forRoot({
        connectionString: zkConnect(),
        rootPath: uniqueRoot('known-options'),
        isGlobal: true,
        acquireTimeoutMs: 100,
        shutdownGraceMs: 0,
      }),
    ]);
    await moduleRef.close();
  });

  it('LockService calls: acquire, withLock, acquireAll, withLease', async () => {
    const moduleRef = await start([ZkLockModule.forTesting()]);
    const locks = moduleRef.get(LockService);
    const cases: Array<[Promise<unknown>, string, string]> = [
      [locks.acquire('a', { timeout: 10 } as never), 'timeout', 'timeoutMs'],
      [locks.withLock('a', () => 1, { ifLock: 'skip' } as never), 'ifLock', 'ifLocked'],
      [locks.acquireAll(['a'], { timeoutMS: 5 } as never), 'timeoutMS', 'timeoutMs'],
      [locks.withLease('a', () => 1, { maxLease: 2 } as never), 'maxLease', 'maxLeases'],
    ];
    for (const [call, option, closest] of cases) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option });
      expect((error as Error).message).toContain(`did you mean "${closest}"?`);
    }
    expect(await locks.locks()).toEqual([]); // nothing was taken
    await moduleRef.close();
  });

  it('@WithLock, when the class is defined', () => {
    expect(() => WithLock('a', { holdAtLeast: 500 } as never)).toThrow(
      /@WithLock: .*holdAtLeast.*did you mean "holdAtLeastMs"\?/,
    );
  });
});
