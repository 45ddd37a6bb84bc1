import { ConfigurableModuleBuilder } from '@nestjs/common';

import type { PgFenceModuleOptions } from './pg-fence-module.options.js';

/**
 * `PgFenceModule.forRoot(options)` and `forRootAsync({ imports, inject, useFactory |
 * useClass | useExisting })`, both with `isGlobal`, built by Nest's own builder as
 * `ZkLockModule`'s are.
 */
export const {
  ConfigurableModuleClass: PgFenceConfigurableModule,
  MODULE_OPTIONS_TOKEN: PG_FENCE_MODULE_OPTIONS,
  OPTIONS_TYPE: PG_FENCE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PG_FENCE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PgFenceModuleOptions>({ moduleName: 'PgFence' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPgFenceOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What a class passed as `useClass` / `useExisting` to `forRootAsync` implements. */
export interface PgFenceOptionsFactory {
  createPgFenceOptions(): PgFenceModuleOptions | Promise<PgFenceModuleOptions>;
}

/** What `forRoot` takes: the module's options, and `isGlobal`. */
export type PgFenceForRootOptions = typeof PG_FENCE_OPTIONS_TYPE;
/** What `forRootAsync` takes: `imports`, `inject`, `useFactory | useClass | useExisting`, and `isGlobal`. */
export type PgFenceAsyncOptions = typeof PG_FENCE_ASYNC_OPTIONS_TYPE;
