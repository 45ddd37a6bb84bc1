import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';

import { LockService, WithLock } from '../../lib/index';
import { backendOf, lockNodes, startApp } from '../nest/nest-fixture';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { CuratorClient } from './curator-client';

@Injectable()
class Billing {
  readonly runs: string[] = [];

  /** The module's nodeFormat ("curator-mutex") applies: a Java InterProcessMutex on the same path excludes it. */
  @WithLock('nightly-invoices')
  async invoice(): Promise<void> {
    this.runs.push('invoice');
  }

  /** A read lock shared with Java's InterProcessReadWriteLock: this call names its own format. */
  @WithLock('price-list', { mode: 'read', nodeFormat: 'curator-rw' })
  async prices(): Promise<string> {
    return 'prices';
  }
}

/** A Nest service and a Java service on Curator, the interoperability example in docs/interoperability.md. */
describe('Curator interop through Nest (ZkLockModule nodeFormat, @WithLock nodeFormat)', () => {
  let app: INestApplication;
  let curator: CuratorClient;
  beforeAll(async () => {
    [app, curator] = await Promise.all([
      startApp({ providers: [Billing] }, { nodeFormat: 'curator-mutex' }, uniqueRoot('curator-nest')),
      CuratorClient.start(zkConnect()),
    ]);
  });
  afterAll(async () => {
    await curator?.stop();
    await app?.close();
  });

  it("@WithLock waits while a Java InterProcessMutex holds the same path, in Curator's node names", async () => {
    const billing = app.get(Billing);
    await curator.lock('java', 'mutex', backendOf(app).pathOf('nightly-invoices'));
    expect(await curator.acquire('java', 'mutex', 0)).toBe(true);
    const run = billing.invoice();
    await waitUntil(
      async () => (await lockNodes(app, 'nightly-invoices'))?.length === 2,
      'the Nest call queues behind Java',
    );
    expect((await app.get(LockService).contenders('nightly-invoices')).map((c) => [c.format, c.holding])).toEqual([
      ['curator-mutex', true],
      ['curator-mutex', false],
    ]);
    expect(billing.runs).toEqual([]);
    await curator.release('java', 'mutex');
    await run;
    expect(billing.runs).toEqual(['invoice']);
  });

  it('a read lock in "curator-rw" shares with Java readers and waits for a Java writer', async () => {
    const billing = app.get(Billing);
    await curator.lock('prices', 'rw', backendOf(app).pathOf('price-list'));
    expect(await curator.acquire('prices', 'read', 0)).toBe(true);
    expect(await billing.prices()).toBe('prices'); // shared with the Java reader
    await curator.release('prices', 'read');

    expect(await curator.acquire('prices', 'write', 0)).toBe(true);
    const read = billing.prices();
    await waitUntil(
      async () => (await lockNodes(app, 'price-list'))?.length === 2,
      'the Nest reader queues behind the Java writer',
    );
    await curator.release('prices', 'write');
    expect(await read).toBe('prices');
  });

  it('@WithLock refuses a reader in "curator-mutex" when the class is defined', () => {
    expect(() => WithLock('report', { mode: 'read', nodeFormat: 'curator-mutex' })).toThrow(
      /@WithLock: .*nodeFormat="curator-mutex".*use nodeFormat "curator-rw"/,
    );
  });
});
