import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';

import {
  InvalidOptionError,
  LockService,
  ZK_LOCK_BACKEND,
  ZkConnectionError,
  ZkLockModule,
  type ZkLockModuleOptions,
  type ZkLockOptionsFactory,
} from '../../lib/index';
import { ZK_LOCK_RESOLVED_OPTIONS } from '../../lib/nest/zk-lock.constants';
import { freePort } from '../support/free-port';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';

const ROOT = uniqueRoot('nest-module');
const base = (): ZkLockModuleOptions => ({ connectionString: zkConnect(), rootPath: ROOT, identity: 'module-test' });

@Injectable()
class LockConfig {
  readonly connectionString = zkConnect();
}
@Module({ providers: [LockConfig], exports: [LockConfig] })
class LockConfigModule {}

@Injectable()
class LockOptionsFactory implements ZkLockOptionsFactory {
  createZkLockOptions(): ZkLockModuleOptions {
    return base();
  }
}
@Module({ providers: [LockOptionsFactory], exports: [LockOptionsFactory] })
class FactoryModule {}

/** A feature module that does not import ZkLockModule itself. */
@Injectable()
class Feature {
  constructor(readonly locks: LockService) {}
}
@Module({ providers: [Feature] })
class FeatureModule {}

async function boot(imports: unknown[]): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[] }).compile();
  return moduleRef.init();
}

async function takesALock(app: INestApplicationContext): Promise<void> {
  const locks = app.get(LockService);
  const value = await locks.withLock('module-check', (handle) => handle.fencingToken);
  expect(typeof value).toBe('bigint');
}

describe('ZkLockModule', () => {
  const variants: Array<[string, () => unknown[]]> = [
    ['forRoot', () => [ZkLockModule.forRoot(base())]],
    [
      'forRootAsync with useFactory, imports and inject',
      () => [
        ZkLockModule.forRootAsync({
          imports: [LockConfigModule],
          inject: [LockConfig],
          useFactory: async (config: LockConfig) => ({
            connectionString: config.connectionString,
            rootPath: ROOT,
            identity: 'module-test',
          }),
        }),
      ],
    ],
    ['forRootAsync with useClass', () => [ZkLockModule.forRootAsync({ useClass: LockOptionsFactory })]],
    [
      'forRootAsync with useExisting',
      () => [ZkLockModule.forRootAsync({ imports: [FactoryModule], useExisting: LockOptionsFactory })],
    ],
  ];

  it.each(variants)('%s compiles, connects, and merges the same defaults', async (_, imports) => {
    const app = await boot(imports());
    try {
      await takesALock(app);
      expect(app.get(ZK_LOCK_RESOLVED_OPTIONS)).toEqual({
        connectionString: zkConnect(),
        rootPath: ROOT,
        identity: 'module-test',
        sessionTimeoutMs: 10_000,
        connectTimeoutMs: 10_000,
        httpErrors: true,
        rpcErrors: true,
        removeEmptyDirectories: true,
        nodeFormat: 'kazoo',
        release: 'sent',
        emptyDirectoryGraceMs: 1000,
        shutdownGraceMs: 10_000,
        logLevels: ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'],
        credentials: undefined,
      });
    } finally {
      await app.close();
    }
    expect(app.get(ZK_LOCK_BACKEND).client.isClosed).toBe(true);
  });

  it('release: "confirmed" reaches the backend: a LockService release then waits for ZooKeeper\'s answer', async () => {
    const app = await boot([ZkLockModule.forRoot({ ...base(), release: 'confirmed' })]);
    try {
      expect(app.get(ZK_LOCK_BACKEND).options.release).toBe('confirmed');
      const lock = await app.get(LockService).acquire('module-release');
      const releasing = lock.release();
      expect(lock.releaseConfirmed).toBe(releasing); // release() is the confirmation itself
      await releasing;
    } finally {
      await app.close();
    }
  });

  it('isGlobal makes LockService injectable in modules that do not import it, from forRoot and forRootAsync', async () => {
    for (const zkLock of [
      ZkLockModule.forRoot({ ...base(), isGlobal: true }),
      ZkLockModule.forRootAsync({ isGlobal: true, useFactory: base }),
    ]) {
      const app = await boot([zkLock, FeatureModule]);
      try {
        expect(app.get(Feature).locks).toBe(app.get(LockService));
      } finally {
        await app.close();
      }
    }
  });

  it('without isGlobal, a module that does not import it cannot inject LockService, and the failed start leaves no connection', async () => {
    const zkSockets = (): number =>
      (process as unknown as { _getActiveHandles(): Array<{ remotePort?: number }> })
        ._getActiveHandles()
        .filter((h) => h.remotePort === zkPort()).length;
    const before = zkSockets();
    await expect(boot([ZkLockModule.forRoot(base()), FeatureModule])).rejects.toThrow(/LockService/);
    await new Promise((r) => setTimeout(r, 300)); // time for a stray connection to be made
    expect(zkSockets()).toBe(before); // nothing connected before dependency injection succeeded
  });

  it('validates options at start-up, the same way for forRoot and forRootAsync', async () => {
    const bad = { ...base(), acquireTimeoutMs: -5 };
    for (const imports of [[ZkLockModule.forRoot(bad)], [ZkLockModule.forRootAsync({ useFactory: () => bad })]]) {
      const error = await boot(imports).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'acquireTimeoutMs' });
    }
  });

  it("fails start-up before jest's default 5 s hook timeout, with the library's own error, when nothing listens at the address", async () => {
    const connectionString = `127.0.0.1:${await freePort()},127.0.0.1:${await freePort()}`;
    const error = await boot([ZkLockModule.forRoot({ connectionString })]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toMatch(/every server refused the connection for 2000 ms.*forTesting/);
    expect((error as Error).message).toContain(connectionString);
  }, 5_000);

  it('fails start-up, naming the connection string, when ZooKeeper cannot be reached', async () => {
    const connectionString = `127.0.0.1:${await freePort()}`;
    const error = await NestFactory.createApplicationContext(
      ZkLockModule.forRoot({ connectionString, connectTimeoutMs: 300 }),
      { logger: false, abortOnError: false },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toContain(connectionString);
  });
});
