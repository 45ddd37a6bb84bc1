import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

import { NoDatabaseError } from './seat.errors.js';

/** No DATABASE_URL: 503, as the payments answer 502 without PARTNER_URL. */
@Catch(NoDatabaseError)
export class NoDatabaseFilter implements ExceptionFilter {
  catch(error: NoDatabaseError, host: ArgumentsHost): void {
    const status = HttpStatus.SERVICE_UNAVAILABLE;
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: error.name, message: error.message });
  }
}
