import 'reflect-metadata';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { TestingModule } from '@nestjs/testing';

import { InMemoryLockStore, LockService, type LeaseContender } from '../../lib/index';
import { PartnerBusyError } from '../../sample-app/src/payments/payment.errors';
import { PARTNER_LEASE, PARTNER_MAX_CONCURRENT, type ChargeRequest } from '../../sample-app/src/payments/payment.model';
import { PaymentsService } from '../../sample-app/src/payments/payments.service';
import { rejectionOf, testingInstance } from './sample-app.testing';

/**
 * Payments through a partner that admits PARTNER_MAX_CONCURRENT calls at once
 * (`@WithLease('payment-partner', { maxLeases })`), over `ZkLockModule.forTesting()`: two
 * instances share one `InMemoryLockStore` and one fake partner, which counts the calls in
 * flight from both.
 */

/** The partner, faked: counts calls in flight across every instance; `refuse` makes the next call fail with 429. */
class CountingPartner {
  inFlight = 0;
  peak = 0;
  calls = 0;
  refuseNext = false;
  /** What the lease semaphore looked like from inside each call. */
  readonly seen: LeaseContender[][] = [];

  constructor(private readonly locks: () => LockService) {}

  async charge(request: ChargeRequest): Promise<{ chargeId: string }> {
    const call = ++this.calls;
    this.peak = Math.max(this.peak, ++this.inFlight);
    try {
      this.seen.push(await this.locks().leaseContenders(PARTNER_LEASE));
      await sleep(15);
      if (this.refuseNext) {
        this.refuseNext = false;
        throw new PartnerBusyError(request.customer);
      }
      return { chargeId: `ch_${call}` };
    } finally {
      this.inFlight--;
    }
  }

  reset(): void {
    Object.assign(this, { inFlight: 0, peak: 0, calls: 0, refuseNext: false });
    this.seen.length = 0;
  }
}

describe('sample app payments, unit-tested over ZkLockModule.forTesting()', () => {
  let storeDir: string;
  let one: TestingModule;
  let two: TestingModule;
  const partner = new CountingPartner(() => one.get(LockService));
  const charge = (app: TestingModule, i: number) =>
    app.get(PaymentsService).charge({ customer: `c${i}`, amountCents: 4500 }, performance.now());

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-sample-payments-'));
    const locks = new InMemoryLockStore();
    [one, two] = await Promise.all([
      testingInstance('one', locks, storeDir, partner),
      testingInstance('two', locks, storeDir, partner),
    ]);
  });
  beforeEach(() => partner.reset());
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    rmSync(storeDir, { recursive: true, force: true });
  });

  it(`charges from two instances at once: never more than ${PARTNER_MAX_CONCURRENT} at the partner, the others wait their turn`, async () => {
    const charged = await Promise.all(Array.from({ length: 12 }, (_, i) => charge(i % 2 === 0 ? one : two, i)));

    expect(charged).toHaveLength(12);
    expect(new Set(charged.map((c) => c.chargeId)).size).toBe(12);
    expect(partner.peak).toBe(PARTNER_MAX_CONCURRENT);
    // From inside each call: at most 3 holders, and the other calls queued behind them, from both instances.
    for (const contenders of partner.seen)
      expect(contenders.filter((c) => c.holding).length).toBeLessThanOrEqual(PARTNER_MAX_CONCURRENT);
    const first = partner.seen[0];
    expect(first.filter((c) => c.holding)).toHaveLength(PARTNER_MAX_CONCURRENT);
    expect(new Set(first.map((c) => c.identity))).toEqual(new Set(['one', 'two']));
    expect(Math.max(...charged.map((c) => c.timing.waitMs))).toBeGreaterThanOrEqual(45); // the last waited for 3 rounds of 15 ms
    expect(await two.get(LockService).leaseContenders(PARTNER_LEASE)).toEqual([]);
  });

  it('without the lease (the control), every charge goes to the partner at once', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? one : two).get(PaymentsService).chargeUnlimited({ customer: `c${i}`, amountCents: 4500 }),
      ),
    );

    expect(partner.peak).toBe(8);
  });

  it('a charge the partner refuses gives its lease back: the next ones go through', async () => {
    partner.refuseNext = true;

    const error = await rejectionOf(charge(one, 0));
    const next = await Promise.all([1, 2, 3, 4].map((i) => charge(two, i)));

    expect(error).toBeInstanceOf(PartnerBusyError);
    expect(next.map((c) => c.instance)).toEqual(['two', 'two', 'two', 'two']);
    expect(await one.get(LockService).leaseContenders(PARTNER_LEASE)).toEqual([]);
  });
});
