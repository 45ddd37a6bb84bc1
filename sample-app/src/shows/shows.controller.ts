import { Body, Controller, Get, Param, Put } from '@nestjs/common';

import { seatsOf, ShowIdPipe } from './show-input.validators.js';
import { ShowsService } from './shows.service.js';

@Controller('shows/:id')
export class ShowsController {
  constructor(private readonly shows: ShowsService) {}

  /** `{"seats": n}`: opens the show with n free seats, or resets it. */
  @Put()
  open(@Param('id', ShowIdPipe) id: string, @Body() body: unknown) {
    return this.shows.open(id, seatsOf(body));
  }

  @Get()
  availability(@Param('id', ShowIdPipe) id: string) {
    return this.shows.availability(id);
  }

  @Get('reservations')
  reservations(@Param('id', ShowIdPipe) id: string) {
    return this.shows.reservations(id);
  }

  @Get('lock')
  lockQueue(@Param('id', ShowIdPipe) id: string) {
    return this.shows.lockQueue(id);
  }
}
