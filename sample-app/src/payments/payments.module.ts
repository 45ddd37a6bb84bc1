import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';

import { PaymentErrorsFilter } from './payment-errors.filter.js';
import { PaymentPartnerClient } from './payment-partner.client.js';
import { PaymentsController } from './payments.controller.js';
import { PaymentsService } from './payments.service.js';

@Module({
  controllers: [PaymentsController],
  providers: [PaymentPartnerClient, PaymentsService, { provide: APP_FILTER, useClass: PaymentErrorsFilter }],
})
export class PaymentsModule {}
