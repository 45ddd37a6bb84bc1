/** The shape the cron example of docs/recipes.md exports (test/nest/partition-cron.spec.ts loads it from a copy). */
import type { Type } from '@nestjs/common';

export declare abstract class OrdersStore {
  abstract syncPart(part: number, token: bigint, signal: AbortSignal): Promise<void>;
}
export declare const OrdersSync: Type;
