import type { CallTiming } from '../common/call-timing.js';

/** The lease semaphore every instance takes before calling the payment partner. */
export const PARTNER_LEASE = 'payment-partner';

/**
 * Our contract with the payment partner: at most this many charges in flight at once,
 * from all our instances together; above it the partner answers 429. Every instance must
 * use the same number (it is stored with the semaphore), hence a constant, not a setting.
 */
export const PARTNER_MAX_CONCURRENT = 3;

/** What the app asks the partner to charge. */
export interface ChargeRequest {
  readonly customer: string;
  readonly amountCents: number;
}

/** A charge the partner accepted. */
export interface Charge extends ChargeRequest {
  /** The partner's id of the charge. */
  readonly chargeId: string;
  /** The instance (INSTANCE) that sent it. */
  readonly instance: string;
}

export interface LeasedCharge extends Charge {
  /** `waitMs`: from the request reaching the controller to holding a lease; `holdMs`: the call to the partner. */
  readonly timing: CallTiming;
}
