import { Inject, Injectable } from '@nestjs/common';

import { LockService, WithLock } from '../../../lib/index.js';
import { callTiming, type CallTiming } from '../common/call-timing.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { showLock, transferLocks, type Show } from './show.model.js';
import { NotEnoughSeatsError, ShowNotFoundError } from './show.errors.js';
import { ShowStore } from './show.store.js';

/** A show's seats once a transfer wrote it. */
export interface ShowSeats {
  readonly id: string;
  readonly seats: number;
  readonly remaining: number;
}

export interface TransferResult {
  /** How many free seats moved. */
  readonly seats: number;
  /** The instance (INSTANCE) that moved them. */
  readonly instance: string;
  readonly from: ShowSeats;
  readonly to: ShowSeats;
}

export interface LockedTransferResult extends TransferResult {
  /**
   * The fencing token (decimal) of each show's lock, which this transfer held together. Each
   * is compared with its own lock's tokens only: two locks granted in one round trip may
   * carry the same value.
   */
  readonly fencingTokens: { readonly from: string; readonly to: string };
  /** `waitMs`: from the request reaching the controller to holding both locks; `holdMs`: the locked work. */
  readonly timing: CallTiming;
}

/**
 * Moves free seats from one show to another (say, from the matinee to the evening
 * performance): a read-modify-write of two rows, which must not interleave with a sale or
 * another transfer on either show.
 */
@Injectable()
export class TransfersService {
  constructor(
    private readonly store: ShowStore,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Holds both shows' locks, taken together: the key function returns two names, so
   * `@WithLock` takes them all or nothing, in one order whichever way the seats move. Two
   * transfers in opposite directions (from two instances) therefore never hold one show
   * each while waiting for the other, as they would with the lock of `from` taken first
   * and the lock of `to` inside it: that deadlocks until the acquire timeout.
   */
  @WithLock(transferLocks)
  async transfer(from: string, to: string, seats: number, enteredAt: number): Promise<LockedTransferResult> {
    const lockedAt = performance.now();
    const token = (show: string): string => String(this.locks.held(showLock(show))?.fencingToken);
    const fencingTokens = { from: token(from), to: token(to) };
    const result = await this.move(from, to, seats);
    return { ...result, fencingTokens, timing: callTiming(enteredAt, lockedAt) };
  }

  /** The same two read-modify-writes without the locks: the control, which creates or loses seats under load. */
  transferUnlocked(from: string, to: string, seats: number): Promise<TransferResult> {
    return this.move(from, to, seats);
  }

  private async move(fromId: string, toId: string, seats: number): Promise<TransferResult> {
    const [from, to] = await Promise.all([this.find(fromId), this.find(toId)]);
    if (from.remaining < seats) throw new NotEnoughSeatsError(fromId, seats, from.remaining);
    const fromAfter: Show = { ...from, seats: from.seats - seats, remaining: from.remaining - seats };
    const toAfter: Show = { ...to, seats: to.seats + seats, remaining: to.remaining + seats };
    await Promise.all([this.store.write(fromAfter), this.store.write(toAfter)]);
    return { seats, instance: this.config.instance, from: seatsOf(fromAfter), to: seatsOf(toAfter) };
  }

  private async find(showId: string): Promise<Show> {
    const show = await this.store.read(showId);
    if (!show) throw new ShowNotFoundError(showId);
    return show;
  }
}

const seatsOf = ({ id, seats, remaining }: Show): ShowSeats => ({ id, seats, remaining });
