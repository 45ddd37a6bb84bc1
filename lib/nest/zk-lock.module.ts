import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';

import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import {
  ZkLockConfigurableModule,
  type ZkLockAsyncOptions,
  type ZkLockForRootOptions,
} from './zk-lock.module-definition.js';
import { LOCK_MODULE_EXPORTS, LOCK_MODULE_PROVIDERS, ZOOKEEPER_PROVIDERS } from './zk-lock.providers.js';
import { resolveTestingOptions, type ZkLockTestingOptions } from './zk-lock-testing.options.js';

/**
 * Distributed locks for the application. `ZkLockModule.forRoot({ connectionString })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`, with
 * `isGlobal`. Connects during start-up and fails it, naming the connection string, when
 * ZooKeeper cannot be reached; on shutdown, cancels waits, releases what it holds and
 * closes the session, so other instances get the locks at once. In unit tests,
 * `forTesting()` provides the same services over an in-memory backend.
 */
@Module({ imports: [DiscoveryModule] })
export class ZkLockModule extends ZkLockConfigurableModule {
  static forRoot(options: ZkLockForRootOptions): DynamicModule {
    return withZooKeeper(super.forRoot(options));
  }

  static forRootAsync(options: ZkLockAsyncOptions): DynamicModule {
    return withZooKeeper(super.forRootAsync(options));
  }

  /**
   * The same providers as `forRoot` (`LockService`, `LeadershipService`, `@WithLock`,
   * `@WhenLeader`) over an `InMemoryLockBackend`: ready at once, no connection, for unit
   * tests of an application in one process. Share a `store` between applications to make
   * them instances of one service.
   */
  static forTesting(options: ZkLockTestingOptions = {}): DynamicModule {
    const { service, backend } = resolveTestingOptions(options);
    return {
      module: ZkLockModule,
      global: options.isGlobal ?? false,
      providers: [
        { provide: ZK_LOCK_RESOLVED_OPTIONS, useValue: service },
        { provide: ZK_LOCK_BACKEND, useValue: backend },
        ...LOCK_MODULE_PROVIDERS,
      ],
      exports: LOCK_MODULE_EXPORTS,
    };
  }
}

function withZooKeeper(module: DynamicModule): DynamicModule {
  return {
    ...module,
    providers: [...(module.providers ?? []), ...ZOOKEEPER_PROVIDERS, ...LOCK_MODULE_PROVIDERS],
    exports: [...(module.exports ?? []), ...LOCK_MODULE_EXPORTS],
  };
}
