/** DATABASE_URL is not set, so there is no PostgreSQL to sell seats in. Answered with 503. */
export class NoDatabaseError extends Error {
  constructor() {
    super('The seats live in PostgreSQL: start the app with DATABASE_URL=postgres://… to sell them.');
    this.name = 'NoDatabaseError';
  }
}
