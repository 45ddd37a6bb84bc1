import { Body, Controller, Get, Post } from '@nestjs/common';

import { chargeOf } from './payment-input.validators.js';
import { PaymentsService } from './payments.service.js';

@Controller('payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  /** `{"customer": "ada", "amountCents": 4500}`: one charge at the partner, under its lease. 503 if the partner is busy. */
  @Post()
  charge(@Body() body: unknown) {
    const enteredAt = performance.now();
    return this.payments.charge(chargeOf(body), enteredAt);
  }

  /** The same without the lease: the control that overloads the partner. */
  @Post('unlimited')
  chargeUnlimited(@Body() body: unknown) {
    return this.payments.chargeUnlimited(chargeOf(body));
  }

  /** The partner lease's holders and waiters, with each one's instance. */
  @Get('partner')
  partnerQueue() {
    return this.payments.partnerQueue();
  }
}
