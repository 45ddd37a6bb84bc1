/** The partner refused the charge with 429: more charges in flight than our contract allows. Answered with 503. */
export class PartnerBusyError extends Error {
  constructor(readonly customer: string) {
    super(
      `The payment partner refused the charge for ${customer} with 429 Too Many Requests: too many charges were in flight at once. Try again.`,
    );
    this.name = 'PartnerBusyError';
  }
}

/** The partner could not be reached, is not configured, or failed. Answered with 502. */
export class PartnerUnavailableError extends Error {
  constructor(why: string) {
    super(`The payment partner is unavailable: ${why}.`);
    this.name = 'PartnerUnavailableError';
  }
}
