import { BadRequestException } from '@nestjs/common';

import type { ChargeRequest } from './payment.model.js';

/** `{"customer": "ada", "amountCents": 4500}`. */
export function chargeOf(body: unknown): ChargeRequest {
  const { customer, amountCents } = (body ?? {}) as { customer?: unknown; amountCents?: unknown };
  if (typeof customer !== 'string' || customer.length === 0 || customer.length > 100) {
    throw new BadRequestException('Send {"customer": "<name>", "amountCents": n} (a name of 1 to 100 characters).');
  }
  if (!Number.isSafeInteger(amountCents) || (amountCents as number) < 1 || (amountCents as number) > 10_000_000) {
    throw new BadRequestException(
      'Send {"customer": "<name>", "amountCents": n} with n a whole number from 1 to 10000000.',
    );
  }
  return { customer, amountCents: amountCents as number };
}
