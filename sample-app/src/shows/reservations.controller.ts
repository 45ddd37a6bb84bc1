import { Body, Controller, Param, Post } from '@nestjs/common';

import { customerOf, ShowIdPipe } from './show-input.validators.js';
import { ReservationsService } from './reservations.service.js';

@Controller('shows/:id/reservations')
export class ReservationsController {
  constructor(private readonly reservations: ReservationsService) {}

  /** `{"customer": "ada"}`: one seat, sold under the show's lock. 409 when sold out. */
  @Post()
  reserve(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    const enteredAt = performance.now();
    return this.reservations.reserve(id, customerOf(body), enteredAt);
  }

  /** The same without the lock: the control that shows what the lock prevents. */
  @Post('unlocked')
  reserveUnlocked(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    return this.reservations.reserveUnlocked(id, customerOf(body));
  }
}
