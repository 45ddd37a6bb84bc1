import { Body, Controller, Param, Post } from '@nestjs/common';

import { ShowIdPipe, transferOf } from './show-input.validators.js';
import { TransfersService } from './transfers.service.js';

@Controller('shows/:id/transfers')
export class TransfersController {
  constructor(private readonly transfers: TransfersService) {}

  /** `{"to": "evening", "seats": 2}`: moves free seats to another show, holding both shows' locks. 409 when too few are free. */
  @Post()
  transfer(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    const enteredAt = performance.now();
    const { to, seats } = transferOf(id, body);
    return this.transfers.transfer(id, to, seats, enteredAt);
  }

  /** The same without the locks: the control that shows what the locks prevent. */
  @Post('unlocked')
  transferUnlocked(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    const { to, seats } = transferOf(id, body);
    return this.transfers.transferUnlocked(id, to, seats);
  }
}
