/** The show has no seat left. Answered with 409 Conflict. */
export class SoldOutError extends Error {
  constructor(readonly showId: string) {
    super(`Show ${showId} is sold out.`);
    this.name = 'SoldOutError';
  }
}

/** No show with that id was opened. Answered with 404 Not Found. */
export class ShowNotFoundError extends Error {
  constructor(readonly showId: string) {
    super(`Show ${showId} does not exist: open it first with PUT /shows/${showId} {"seats": n}.`);
    this.name = 'ShowNotFoundError';
  }
}

/** A transfer asked for more seats than the show has free. Answered with 409 Conflict. */
export class NotEnoughSeatsError extends Error {
  constructor(
    readonly showId: string,
    readonly requested: number,
    readonly remaining: number,
  ) {
    super(`Show ${showId} has ${remaining} free seats, fewer than the ${requested} asked to move.`);
    this.name = 'NotEnoughSeatsError';
  }
}
