/**
 * Compile-time checks of the `LockBackend` port, type-checked by `npm test` (tsc): each
 * `@ts-expect-error` must meet an error, or the type check fails. Never run.
 */
import type { LockBackend } from '../../lib/index';

type Method = keyof LockBackend;

/** A backend with every method but `left`: what a backend written against an older port looks like. */
type Without<M extends Method> = Omit<LockBackend, M>;

declare const complete: LockBackend;
declare const noAcquireAll: Without<'acquireAll'>;
declare const noAcquireLease: Without<'acquireLease'>;
declare const noLeaseContenders: Without<'leaseContenders'>;

export const backends: LockBackend[] = [
  complete,
  // Every method of the port is required: LockService, ReentrantLocker and LeaderElection
  // call them without checking that they exist.
  // @ts-expect-error acquireAll is missing
  noAcquireAll,
  // @ts-expect-error acquireLease is missing
  noAcquireLease,
  // @ts-expect-error leaseContenders is missing
  noLeaseContenders,
];

// Called without a guard: none of them may be optional.
export const calls = [
  complete.acquireAll(['a', 'b']),
  complete.acquireLease('pool', { maxLeases: 2 }),
  complete.leaseContenders('pool'),
];
