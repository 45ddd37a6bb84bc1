import { Inject, Injectable } from '@nestjs/common';

import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import type { ChargeRequest } from './payment.model.js';
import { PartnerBusyError, PartnerUnavailableError } from './payment.errors.js';

/**
 * The payment partner's API (PARTNER_URL): `POST /charges` answers 201 `{ chargeId }`, or
 * 429 when more charges are in flight than our contract allows. Knows nothing of leases:
 * `PaymentsService` decides how many calls run at once.
 */
@Injectable()
export class PaymentPartnerClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async charge(request: ChargeRequest): Promise<{ chargeId: string }> {
    if (!this.config.partnerUrl) throw new PartnerUnavailableError('PARTNER_URL is not set');
    const url = `${this.config.partnerUrl}/charges`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new PartnerUnavailableError(`POST ${url} failed: ${(error as Error).message}`);
    }
    const text = await response.text();
    if (response.status === 429) throw new PartnerBusyError(request.customer);
    if (response.status !== 201) throw new PartnerUnavailableError(`POST ${url} answered ${response.status} ${text}`);
    return JSON.parse(text) as { chargeId: string };
  }
}
