/** The shape the README's snippet exports (test/package/readme-snippet.spec.ts loads it from a copy). */
import type { Type } from '@nestjs/common';

export declare const AppModule: Type;
export declare class ReservationsService {
  reserve(showId: string, customer: string): Promise<{ seat: number | null; token: string }>;
  availability(showId: string): Promise<number>;
  sellTwo(showId: string, customer: string): Promise<Array<number | null>>;
}
