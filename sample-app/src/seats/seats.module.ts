import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';

import { NoDatabaseFilter } from './seat-errors.filter.js';
import { SeatSalesController } from './seat-sales.controller.js';
import { SeatSalesService } from './seat-sales.service.js';
import { SeatStore } from './seat.store.js';

@Module({
  controllers: [SeatSalesController],
  providers: [SeatStore, SeatSalesService, { provide: APP_FILTER, useClass: NoDatabaseFilter }],
})
export class SeatsModule {}
