/**
 * Compile-time checks of `LockService`'s call forms, type-checked by `npm test` (tsc): each
 * `@ts-expect-error` must meet an error, or the type check fails. Never run.
 */
import { createLockServiceMock, type LockService, type LockServiceMock } from '../../lib/index';

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

/** A class that keeps the `LockService` it is given, as a unit test constructs it. */
class Orders {
  constructor(readonly locks: LockService) {}
}

export function mocks(): void {
  // The mock is a LockService: no cast.
  const orders = new Orders(createLockServiceMock());
  // A mock of one's own implements only what the decorators call: not a LockService.
  const own: LockServiceMock = {
    withLock: async (_name, fn) => fn(),
    withLocks: async (_locks, fn) => fn(),
    withLease: async (_name, fn) => fn(),
  };
  // @ts-expect-error a plain object can never be a LockService (it has private members)
  const plain = new Orders(own);
  void [orders, plain];
}
