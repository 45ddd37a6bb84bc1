/** One seat of a show in PostgreSQL's `seats` table. */
export interface Seat {
  readonly seat: number;
  /** Who bought it, or `null` while it is free. */
  readonly customer: string | null;
  /** The instance that wrote the sale. */
  readonly instance: string | null;
  /** The fencing token the sale was written under (decimal), `null` while free. */
  readonly fencingToken: string | null;
}

/** A seat sold: which one, to whom, under which token. */
export interface SeatSale {
  readonly showId: string;
  readonly seat: number;
  readonly customer: string;
  readonly instance: string;
  readonly fencingToken: string;
}

/** Whether a sale's write goes through the fence (`PgFence.check`) or not (the control). */
export type SaleWrite = 'fenced' | 'unfenced';
