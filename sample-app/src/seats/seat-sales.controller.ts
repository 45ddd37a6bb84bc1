import { BadRequestException, Body, Controller, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';

import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { customerOf, seatsOf, ShowIdPipe } from '../shows/show-input.validators.js';
import type { SaleWrite } from './seat.model.js';
import { SeatSalesService } from './seat-sales.service.js';

/** Seats in PostgreSQL, sold under the show's lock, the write fenced by `PgFence` or not (the control). */
@Controller('shows/:id/seats')
export class SeatSalesController {
  constructor(
    private readonly sales: SeatSalesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `{"seats": 10}`: opens the show in PostgreSQL with that many free seats, or resets it. */
  @Put()
  @HttpCode(200)
  async open(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    const seats = seatsOf(body);
    await this.sales.open(id, seats);
    return { id, seats };
  }

  /** Every seat, with its customer and the token its sale was written under. */
  @Get()
  seats(@Param('id', ShowIdPipe) id: string) {
    return this.sales.seats(id);
  }

  /** `{"customer": "ada"}`: the lowest free seat, its write fenced. 409 when its token is stale. */
  @Post()
  sell(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    return this.sale(id, body, 'fenced');
  }

  /** The same, its write not fenced: the control, whose zombie overwrites a newer sale. */
  @Post('unfenced')
  sellUnfenced(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    return this.sale(id, body, 'unfenced');
  }

  private sale(id: string, body: unknown, write: SaleWrite) {
    const pause = (body as { pause?: unknown } | undefined)?.pause === true;
    if (pause && !this.config.pauseAllowed)
      throw new BadRequestException('"pause" stops this process: only with DEMO_PAUSE=1, as the demo starts it.');
    return this.sales.sell(id, customerOf(body), write, pause);
  }
}
