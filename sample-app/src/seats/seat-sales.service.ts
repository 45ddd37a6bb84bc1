import { Inject, Injectable } from '@nestjs/common';

import { LockService, WithLock } from '../../../lib/index.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { showLock } from '../shows/show.model.js';
import type { SaleWrite, Seat, SeatSale } from './seat.model.js';
import { SeatStore } from './seat.store.js';

@Injectable()
export class SeatSalesService {
  constructor(
    private readonly store: SeatStore,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @WithLock(showLock)
  open(showId: string, seats: number): Promise<void> {
    return this.store.open(showId, seats);
  }

  @WithLock(showLock, { mode: 'read' })
  seats(showId: string): Promise<Seat[]> {
    return this.store.seats(showId);
  }

  /**
   * Sells the show's lowest free seat holding the show's lock: reads which seat is free,
   * then writes the sale with the lock's fencing token, `fenced` or not (the control).
   * `pause` stops this process between the read and the write (SIGSTOP to itself, as a
   * long GC pause or a frozen VM would), until someone sends it SIGCONT: meanwhile its
   * ZooKeeper session expires and another instance may take the lock and sell; resumed,
   * it writes as if it still held the lock. The demo's zombie.
   */
  @WithLock(showLock)
  async sell(showId: string, customer: string, write: SaleWrite, pause = false): Promise<SeatSale> {
    const { fencingToken } = this.locks.held(showLock(showId))!;
    const seat = await this.store.freeSeat(showId);
    const sale: SeatSale = {
      showId,
      seat,
      customer,
      instance: this.config.instance,
      fencingToken: String(fencingToken),
    };
    if (pause) process.kill(process.pid, 'SIGSTOP');
    await this.store.write(sale, write);
    return sale;
  }
}
