/**
 * Compile-time checks of `LockService`'s call forms, type-checked by `npm test` (tsc): each
 * `@ts-expect-error` must meet an error, or the type check fails. Never run.
 */
import type { LockService } from '../../lib/index';

declare const locks: LockService;

export async function forms(): Promise<void> {
  // Without ifLocked: 'skip' the body always runs (or the call rejects): its result, not undefined.
  const always: number = await locks.withLock('a', () => 1);
  const thrown: number = await locks.withLock('a', async () => 1, { ifLocked: 'throw', timeoutMs: 0 });
  const together: string = await locks.withLocks(['a', 'b'], () => 'both');
  // @ts-expect-error with ifLocked: 'skip' the body may not run: undefined is possible
  const skipped: number = await locks.withLock('a', () => 1, { ifLocked: 'skip' });
  // @ts-expect-error the same for several locks
  const skippedAll: number = await locks.withLocks(['a'], () => 1, { ifLocked: 'skip' });
  const maybe: number | undefined = await locks.withLock('a', () => 1, { ifLocked: 'skip' });
  // @ts-expect-error unknown options are refused
  await locks.withLock('a', () => 1, { ifLockd: 'skip' });
  // @ts-expect-error leases need maxLeases
  await locks.withLease('pool', () => 1, {});
  const lease: number = await locks.withLease('pool', () => 1, { maxLeases: 2 });
  void [always, thrown, together, skipped, skippedAll, maybe, lease];
}
