import type { Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';

import { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { LeadershipExplorer } from './leadership.explorer.js';
import { LeadershipService } from './leadership.service.js';
import { LockContextInterceptor } from './lock-context.interceptor.js';
import { LockErrorInterceptor } from './errors/lock-error.interceptor.js';
import { LockService } from './lock.service.js';
import { PartitionService } from './partition.service.js';
import { DecoratedMethodsExplorer } from './decorated-methods.explorer.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import { resolveModuleOptions, type ResolvedZkLockModuleOptions } from './zk-lock-module.options.js';
import { ZkSessionLog } from './session-log.listener.js';

/** What every variant of the module provides over its backend (`ZK_LOCK_BACKEND`) and options. */
export const LOCK_MODULE_PROVIDERS: Provider[] = [
  LockService,
  DecoratedMethodsExplorer,
  LeadershipService,
  LeadershipExplorer,
  PartitionService,
  { provide: APP_INTERCEPTOR, useClass: LockErrorInterceptor },
  { provide: APP_INTERCEPTOR, useClass: LockContextInterceptor },
];

export const LOCK_MODULE_EXPORTS = [LockService, LeadershipService, PartitionService, ZK_LOCK_BACKEND];

/** The ZooKeeper backend of `forRoot` and `forRootAsync`, from the module's options. */
export const ZOOKEEPER_PROVIDERS: Provider[] = [
  { provide: ZK_LOCK_RESOLVED_OPTIONS, useFactory: resolveModuleOptions, inject: [ZK_LOCK_MODULE_OPTIONS] },
  {
    provide: ZK_LOCK_BACKEND,
    // Connected at bootstrap (LockService.onApplicationBootstrap) or by the first lock
    // call, once every module initialised: a connection opened here would leak if a
    // later provider or onModuleInit hook failed.
    useFactory: (options: ResolvedZkLockModuleOptions) => ZkLockBackend.unconnected(options),
    inject: [ZK_LOCK_RESOLVED_OPTIONS],
  },
  ZkSessionLog,
];
