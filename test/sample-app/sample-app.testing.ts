import { Test, type TestingModule } from '@nestjs/testing';

import { ZkLockModule, type InMemoryLockStore } from '../../lib/index';
import { AppModule, locks as zkLocks } from '../../sample-app/src/app.module';
import { APP_CONFIG, type AppConfig } from '../../sample-app/src/config/app.config';
import { PaymentPartnerClient } from '../../sample-app/src/payments/payment-partner.client';

/**
 * One instance of the sample app for unit tests: its own AppModule, with its lock module
 * swapped for `ZkLockModule.forTesting()` over `locks` (share one `InMemoryLockStore` to
 * make several instances), the settings given here instead of read from the environment,
 * and, if given, `partner` instead of the HTTP client of the payment partner.
 */
export async function testingInstance(
  name: string,
  locks: InMemoryLockStore,
  storeDir: string,
  partner?: Pick<PaymentPartnerClient, 'charge'>,
): Promise<TestingModule> {
  const config: AppConfig = {
    zkConnect: 'never used: forTesting connects nowhere',
    port: 0,
    host: '127.0.0.1',
    storeDir,
    storeDelayMs: 5,
    instance: name,
    partnerUrl: undefined,
    databaseUrl: undefined,
    pauseAllowed: false,
  };
  let builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideModule(zkLocks)
    .useModule(ZkLockModule.forTesting({ isGlobal: true, store: locks, identity: name }))
    .overrideProvider(APP_CONFIG)
    .useValue(config);
  if (partner) builder = builder.overrideProvider(PaymentPartnerClient).useValue(partner);
  return (await builder.compile()).init();
}

/** The error `promise` rejects with; fails if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
