import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

import { NotEnoughSeatsError, ShowNotFoundError, SoldOutError } from './show.errors.js';

type ShowError = SoldOutError | ShowNotFoundError | NotEnoughSeatsError;

/** Maps the shows' domain errors to HTTP answers (the services know nothing of HTTP). */
@Catch(SoldOutError, ShowNotFoundError, NotEnoughSeatsError)
export class ShowErrorsFilter implements ExceptionFilter {
  catch(error: ShowError, host: ArgumentsHost): void {
    const status = error instanceof ShowNotFoundError ? HttpStatus.NOT_FOUND : HttpStatus.CONFLICT;
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: error.name, message: error.message });
  }
}
