import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';

import { ReservationsController } from './reservations.controller.js';
import { ReservationsService } from './reservations.service.js';
import { ShowErrorsFilter } from './show-errors.filter.js';
import { ShowStore } from './show.store.js';
import { ShowsController } from './shows.controller.js';
import { ShowsService } from './shows.service.js';
import { TransfersController } from './transfers.controller.js';
import { TransfersService } from './transfers.service.js';

@Module({
  controllers: [ShowsController, ReservationsController, TransfersController],
  providers: [
    ShowStore,
    ShowsService,
    ReservationsService,
    TransfersService,
    { provide: APP_FILTER, useClass: ShowErrorsFilter },
  ],
})
export class ShowsModule {}
