import { Module, type DynamicModule, type Provider } from '@nestjs/common';

import { InvalidOptionError } from '../../core/errors/errors.js';
import { assertKnownOptions } from '../../core/errors/unknown-option.js';
import { PgFence } from '../pg-fence.js';
import {
  PG_FENCE_MODULE_OPTIONS,
  PgFenceConfigurableModule,
  type PgFenceAsyncOptions,
  type PgFenceForRootOptions,
} from './pg-fence.module-definition.js';
import type { PgFenceModuleOptions } from './pg-fence-module.options.js';

const OPTION_KEYS: readonly string[] = ['pool', 'table', 'install'];

/** `PgFence`, made from the module's options: checked, and its table installed when asked. */
const FENCE_PROVIDER: Provider = {
  provide: PgFence,
  inject: [PG_FENCE_MODULE_OPTIONS],
  useFactory: async (options: PgFenceModuleOptions): Promise<PgFence> => {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError('options', options, 'an object such as { pool, install: true }');
    assertKnownOptions(options, OPTION_KEYS, 'PgFenceModule');
    const { pool, table, install = false } = options;
    if (typeof install !== 'boolean') throw new InvalidOptionError('install', install, 'true or false');
    const fence = new PgFence(pool, { table });
    if (install) await fence.install();
    return fence;
  },
};

/**
 * Provides `PgFence` (from `nestjs-zk-lock/postgres`) to the application:
 * `PgFenceModule.forRoot({ pool, table?, install? })` or `forRootAsync({ imports, inject,
 * useFactory | useClass | useExisting })`, with `isGlobal`. Inside a `@WithLock` or
 * `@WhenLeader` method, `fence.transactionForCall(fn)` opens a transaction fenced by the
 * lock (or term) the call holds.
 */
@Module({})
export class PgFenceModule extends PgFenceConfigurableModule {
  static forRoot(options: PgFenceForRootOptions): DynamicModule {
    return withFence(super.forRoot(options));
  }

  static forRootAsync(options: PgFenceAsyncOptions): DynamicModule {
    return withFence(super.forRootAsync(options));
  }
}

function withFence(module: DynamicModule): DynamicModule {
  return {
    ...module,
    providers: [...(module.providers ?? []), FENCE_PROVIDER],
    exports: [...(module.exports ?? []), PgFence],
  };
}
