import { Injectable } from '@nestjs/common';

import { LockService, WithLock, type LockContender } from '../../../lib/index.js';
import { availabilityOf, showLock, type Availability, type Reservation, type Show } from './show.model.js';
import { ShowNotFoundError } from './show.errors.js';
import { ShowStore } from './show.store.js';

@Injectable()
export class ShowsService {
  constructor(
    private readonly store: ShowStore,
    private readonly locks: LockService,
  ) {}

  /** Opens a show with `seats` free seats, or resets it; under the lock, so never in the middle of a sale. */
  open(showId: string, seats: number): Promise<Availability> {
    return this.locks.withLock(showLock(showId), async () => {
      const show = { id: showId, seats, remaining: seats, reservations: [] };
      await this.store.write(show);
      return availabilityOf(show);
    });
  }

  /** Shared with other readers, exclusive of sales: never sees a sale half done. */
  @WithLock(showLock, { mode: 'read' })
  async availability(showId: string): Promise<Availability> {
    return availabilityOf(await this.find(showId));
  }

  /** The recorded reservations, in the order they were written. */
  @WithLock(showLock, { mode: 'read' })
  async reservations(showId: string): Promise<readonly Reservation[]> {
    return (await this.find(showId)).reservations;
  }

  /** Who holds the show's lock and who waits for it, across all instances. */
  async lockQueue(showId: string): Promise<{ lock: string; contenders: LockContender[] }> {
    const lock = showLock(showId);
    return { lock, contenders: await this.locks.contenders(lock) };
  }

  private async find(showId: string): Promise<Show> {
    const show = await this.store.read(showId);
    if (!show) throw new ShowNotFoundError(showId);
    return show;
  }
}
