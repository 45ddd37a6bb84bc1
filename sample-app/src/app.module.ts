import { Module } from '@nestjs/common';

import { ZkLockModule } from '../../lib/index.js';
import { APP_CONFIG, type AppConfig } from './config/app.config.js';
import { AppConfigModule } from './config/app-config.module.js';
import { HealthModule } from './health/health.module.js';
import { PaymentsModule } from './payments/payments.module.js';
import { SeatsModule } from './seats/seats.module.js';
import { ShowsModule } from './shows/shows.module.js';

/** The lock module, a constant so that unit tests can swap it: `overrideModule(locks).useModule(ZkLockModule.forTesting(…))`. */
export const locks = ZkLockModule.forRootAsync({
  isGlobal: true,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => ({
    connectionString: config.zkConnect,
    rootPath: '/sample-app',
    // Shown by GET /shows/:id/lock, so you can tell which instance holds or waits.
    identity: `${config.instance} (pid ${process.pid})`,
    acquireTimeoutMs: 10_000,
  }),
});

@Module({
  imports: [AppConfigModule, locks, ShowsModule, SeatsModule, PaymentsModule, HealthModule],
})
export class AppModule {}
