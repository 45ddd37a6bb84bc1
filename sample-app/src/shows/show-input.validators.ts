import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

const SHOW_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Show ids become file names in the store, so only plain ones are accepted. */
@Injectable()
export class ShowIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!SHOW_ID.test(value)) throw new BadRequestException('A show id is 1 to 64 letters, digits, "-" or "_".');
    return value;
  }
}

export function customerOf(body: unknown): string {
  const customer = (body as { customer?: unknown } | undefined)?.customer;
  if (typeof customer !== 'string' || customer.length === 0 || customer.length > 100) {
    throw new BadRequestException('Send {"customer": "<name>"} (1 to 100 characters).');
  }
  return customer;
}

export function seatsOf(body: unknown): number {
  const seats = (body as { seats?: unknown } | undefined)?.seats;
  if (!Number.isSafeInteger(seats) || (seats as number) < 0 || (seats as number) > 1_000_000) {
    throw new BadRequestException('Send {"seats": n} with n a whole number from 0 to 1000000.');
  }
  return seats as number;
}

/** `{"to": "<show id>", "seats": n}`: where free seats of show `from` go, and how many. */
export function transferOf(from: string, body: unknown): { to: string; seats: number } {
  const { to, seats } = (body ?? {}) as { to?: unknown; seats?: unknown };
  if (typeof to !== 'string' || !SHOW_ID.test(to) || to === from) {
    throw new BadRequestException(`Send {"to": "<show id>", "seats": n}, "to" being another show than ${from}.`);
  }
  if (!Number.isSafeInteger(seats) || (seats as number) < 1 || (seats as number) > 1_000_000) {
    throw new BadRequestException('Send {"to": "<show id>", "seats": n} with n a whole number from 1 to 1000000.');
  }
  return { to, seats: seats as number };
}
