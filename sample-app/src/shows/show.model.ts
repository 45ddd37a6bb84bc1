/** One confirmed seat, as the store records it. */
export interface Reservation {
  readonly customer: string;
  /** The instance (INSTANCE) that sold the seat. */
  readonly instance: string;
  /** The lock grant's fencing token (decimal), or `null` when sold without the lock. */
  readonly fencingToken: string | null;
  readonly at: string;
}

/** A show's row in the store: what a database row would hold. */
export interface Show {
  readonly id: string;
  readonly seats: number;
  readonly remaining: number;
  readonly reservations: readonly Reservation[];
}

export interface Availability {
  readonly id: string;
  readonly seats: number;
  readonly remaining: number;
  /** How many reservations the store holds (seats - remaining, unless updates were lost). */
  readonly reserved: number;
}

export const availabilityOf = (show: Show): Availability => ({
  id: show.id,
  seats: show.seats,
  remaining: show.remaining,
  reserved: show.reservations.length,
});

/** The one lock of a show, taken by every instance that reads or changes it. */
export const showLock = (showId: string): string => `show:${showId}`;

/**
 * The locks of a transfer between two shows: both shows' locks, taken together (all or
 * nothing, in one order whichever way the seats move), so opposite transfers never deadlock.
 */
export const transferLocks = (from: string, to: string): string[] => [showLock(from), showLock(to)];
