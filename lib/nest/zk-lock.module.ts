import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';

import { ZkLockBackend } from '../core/recipe/zk-lock.backend.js';
import { LockContextInterceptor } from './lock-context.interceptor.js';
import { LockHttpErrorInterceptor } from './lock-http-error.interceptor.js';
import { LeadershipExplorer } from './leadership.explorer.js';
import { LeadershipService } from './leadership.service.js';
import { LockService } from './lock.service.js';
import { WithLockExplorer } from './with-lock.explorer.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import { ZK_LOCK_MODULE_OPTIONS, ZkLockConfigurableModule } from './zk-lock.module-definition.js';
import { resolveModuleOptions, type ResolvedZkLockModuleOptions } from './zk-lock-module.options.js';

/**
 * Distributed locks for the application. `ZkLockModule.forRoot({ connectionString })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`, with
 * `isGlobal`. Connects during start-up and fails it, naming the connection string, when
 * ZooKeeper cannot be reached; on shutdown, cancels waits, releases what it holds and
 * closes the session, so other instances get the locks at once.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: ZK_LOCK_RESOLVED_OPTIONS, useFactory: resolveModuleOptions, inject: [ZK_LOCK_MODULE_OPTIONS] },
    {
      provide: ZK_LOCK_BACKEND,
      // Connected at bootstrap (LockService.onApplicationBootstrap) or by the first lock
      // call, once every module initialised: a connection opened here would leak if a
      // later provider or onModuleInit hook failed.
      useFactory: (options: ResolvedZkLockModuleOptions) => ZkLockBackend.unconnected(options),
      inject: [ZK_LOCK_RESOLVED_OPTIONS],
    },
    LockService,
    WithLockExplorer,
    LeadershipService,
    LeadershipExplorer,
    { provide: APP_INTERCEPTOR, useClass: LockHttpErrorInterceptor },
    { provide: APP_INTERCEPTOR, useClass: LockContextInterceptor },
  ],
  exports: [LockService, LeadershipService, ZK_LOCK_BACKEND],
})
export class ZkLockModule extends ZkLockConfigurableModule {}
