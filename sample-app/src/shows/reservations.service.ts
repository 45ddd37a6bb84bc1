import { Inject, Injectable } from '@nestjs/common';

import { LockService, WithLock } from '../../../lib/index.js';
import { callTiming, type CallTiming } from '../common/call-timing.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { showLock, type Reservation } from './show.model.js';
import { ShowNotFoundError, SoldOutError } from './show.errors.js';
import { ShowStore } from './show.store.js';

export interface ReservationResult extends Reservation {
  readonly showId: string;
  /** Seats left after this one, as this request wrote it. */
  readonly remaining: number;
}

export interface LockedReservationResult extends ReservationResult {
  /** `waitMs`: from the request reaching the controller to holding the lock; `holdMs`: the locked work. */
  readonly timing: CallTiming;
}

@Injectable()
export class ReservationsService {
  constructor(
    private readonly store: ShowStore,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sells one seat holding the show's lock, so that no two requests, on any instance,
   * read-modify-write the show at once. `enteredAt` (performance.now()) is when the request
   * arrived, to report how long it waited for the lock.
   */
  @WithLock(showLock)
  async reserve(showId: string, customer: string, enteredAt: number): Promise<LockedReservationResult> {
    const lockedAt = performance.now();
    const fencingToken = this.locks.held(showLock(showId))?.fencingToken;
    const result = await this.sell(showId, customer, fencingToken);
    return { ...result, timing: callTiming(enteredAt, lockedAt) };
  }

  /** The same read-modify-write without the lock: the control, which loses updates under load. */
  reserveUnlocked(showId: string, customer: string): Promise<ReservationResult> {
    return this.sell(showId, customer, undefined);
  }

  private async sell(showId: string, customer: string, fencingToken: bigint | undefined): Promise<ReservationResult> {
    const show = await this.store.read(showId);
    if (!show) throw new ShowNotFoundError(showId);
    if (show.remaining <= 0) throw new SoldOutError(showId);
    const reservation: Reservation = {
      customer,
      instance: this.config.instance,
      fencingToken: fencingToken === undefined ? null : String(fencingToken),
      at: new Date().toISOString(),
    };
    await this.store.write({
      ...show,
      remaining: show.remaining - 1,
      reservations: [...show.reservations, reservation],
    });
    return { showId, ...reservation, remaining: show.remaining - 1 };
  }
}
