import 'reflect-metadata';
import { Injectable, type LogLevel, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

import {
  InMemoryLockStore,
  InvalidOptionError,
  LeadershipService,
  LockLostError,
  LockService,
  WhenLeader,
  WithLock,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type InMemoryLockBackend,
  type ZkLockBackend,
  type ZkLockTestingOptions,
} from '../../lib/index';
import { CapturedLog } from '../support/captured-log';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

@Injectable()
class Jobs {
  @WithLock('nightly', { ifLocked: 'skip' })
  async run(): Promise<string | undefined> {
    return 'ran';
  }

  @WhenLeader('reports')
  async report(): Promise<string | undefined> {
    return 'reported';
  }
}

async function context(options: ZkLockTestingOptions, log: CapturedLog): Promise<INestApplicationContext> {
  @Module({ imports: [ZkLockModule.forTesting(options)], providers: [Jobs] })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: log });
}

/** `logLevels`: the levels the library writes at (context `ZkLock`), whatever the application's logger prints. */
describe('the library log levels (logLevels)', () => {
  /**
   * An instance that does not lead and finds its job's lock taken: a skipped `@WithLock`
   * and a skipped `@WhenLeader` call (verbose), then a lock lost under a call (warn).
   */
  async function linesWith(logLevels: LogLevel[] | undefined): Promise<Array<[string, string]>> {
    const log = new CapturedLog();
    const store = new InMemoryLockStore();
    const other = await context({ store, identity: 'other' }, log);
    await waitUntil(() => other.get(LeadershipService).isLeader('reports'), 'the other instance leads');
    const held = await other.get(LockService).acquire('nightly');
    const app = await context({ store, identity: 'app', ...(logLevels ? { logLevels } : {}) }, log);
    try {
      await expect(app.get(Jobs).run()).resolves.toBeUndefined();
      await expect(app.get(Jobs).report()).resolves.toBeUndefined();
      const backend = app.get<InMemoryLockBackend>(ZK_LOCK_BACKEND);
      await expect(app.get(LockService).withLock('lost', async () => backend.loseLock('lost'))).rejects.toBeInstanceOf(
        LockLostError,
      );
      return [...log.lines];
    } finally {
      await held.release();
      await app.close();
      await other.close();
    }
  }

  it('writes every level by default', async () => {
    const lines = await linesWith(undefined);
    expect(lines.map(([level]) => level)).toEqual(['verbose', 'verbose', 'warn']);
    expect(lines[1][1]).toMatch(/^Skipped Jobs.report: this instance does not lead group "reports"/);
  });

  it("['warn', 'error']: the warning, not the routine skips; [] silences the library", async () => {
    expect((await linesWith(['warn', 'error'])).map(([level, line]) => [level, line.slice(0, 15)])).toEqual([
      ['warn', 'Lock "lost" was'],
    ]);
    expect(await linesWith([])).toEqual([]);
  });

  it("holds for the session's lines of forRoot too: no 'Connected' line at ['warn', 'error']", async () => {
    const log = new CapturedLog();
    @Module({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          rootPath: uniqueRoot('log-levels'),
          logLevels: ['warn'],
        }),
      ],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: log });
    try {
      await waitUntil(() => app.get<ZkLockBackend>(ZK_LOCK_BACKEND).client.session.isConnected, 'connected');
      await app.get(LockService).withLock('x', () => undefined);
      expect(log.lines).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a value that is not an array of Nest log levels: InvalidOptionError naming the levels', () => {
    for (const logLevels of ['warn', ['warning'], null])
      expect(() => ZkLockModule.forTesting({ logLevels: logLevels as LogLevel[] })).toThrow(
        expect.objectContaining({
          constructor: InvalidOptionError,
          message: expect.stringContaining('verbose, debug, log, warn, error, fatal'),
        }),
      );
  });
});
