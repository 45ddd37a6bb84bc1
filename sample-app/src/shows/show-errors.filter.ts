import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

import { ShowNotFoundError, SoldOutError } from './show.errors.js';

/** Maps the shows' domain errors to HTTP answers (the services know nothing of HTTP). */
@Catch(SoldOutError, ShowNotFoundError)
export class ShowErrorsFilter implements ExceptionFilter {
  catch(error: SoldOutError | ShowNotFoundError, host: ArgumentsHost): void {
    const status = error instanceof SoldOutError ? HttpStatus.CONFLICT : HttpStatus.NOT_FOUND;
    host.switchToHttp().getResponse<Response>().status(status).json({ statusCode: status, error: error.name, message: error.message });
  }
}
