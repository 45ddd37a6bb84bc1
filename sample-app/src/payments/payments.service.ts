import { Inject, Injectable } from '@nestjs/common';

import { LockService, WithLease, type LeaseContender } from '../../../lib/index.js';
import { callTiming } from '../common/call-timing.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { PaymentPartnerClient } from './payment-partner.client.js';
import {
  PARTNER_LEASE,
  PARTNER_MAX_CONCURRENT,
  type Charge,
  type ChargeRequest,
  type LeasedCharge,
} from './payment.model.js';

@Injectable()
export class PaymentsService {
  constructor(
    private readonly partner: PaymentPartnerClient,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Charges through the partner holding one of its PARTNER_MAX_CONCURRENT leases, so that
   * never more charges are in flight at the partner than our contract allows, counted over
   * every instance; the others wait their turn (FIFO) instead of being refused with 429.
   * `enteredAt` (performance.now()) is when the request arrived.
   */
  @WithLease(PARTNER_LEASE, { maxLeases: PARTNER_MAX_CONCURRENT })
  async charge(request: ChargeRequest, enteredAt: number): Promise<LeasedCharge> {
    const leasedAt = performance.now();
    const charge = await this.send(request);
    return { ...charge, timing: callTiming(enteredAt, leasedAt) };
  }

  /** The same call without the lease: the control, which the partner refuses with 429 under load. */
  chargeUnlimited(request: ChargeRequest): Promise<Charge> {
    return this.send(request);
  }

  /** Who holds the partner's leases and who waits for one, across all instances. */
  async partnerQueue(): Promise<{ lease: string; maxLeases: number; contenders: LeaseContender[] }> {
    return {
      lease: PARTNER_LEASE,
      maxLeases: PARTNER_MAX_CONCURRENT,
      contenders: await this.locks.leaseContenders(PARTNER_LEASE),
    };
  }

  private async send(request: ChargeRequest): Promise<Charge> {
    const { chargeId } = await this.partner.charge(request);
    return { ...request, chargeId, instance: this.config.instance };
  }
}
