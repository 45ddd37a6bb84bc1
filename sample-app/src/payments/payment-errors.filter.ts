import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

import { PartnerBusyError, PartnerUnavailableError } from './payment.errors.js';

/** Maps the payment partner's failures to HTTP answers: busy is 503 (retry later), unavailable 502. */
@Catch(PartnerBusyError, PartnerUnavailableError)
export class PaymentErrorsFilter implements ExceptionFilter {
  catch(error: PartnerBusyError | PartnerUnavailableError, host: ArgumentsHost): void {
    const status = error instanceof PartnerBusyError ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.BAD_GATEWAY;
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: error.name, message: error.message });
  }
}
