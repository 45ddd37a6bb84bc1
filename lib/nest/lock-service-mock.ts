import { InvalidOptionError } from '../core/errors/errors.js';
import { assertKnownOptions } from '../core/errors/unknown-option.js';
import { leadershipRegistry, type LockServiceLike } from './service-registry.js';

/**
 * A stand-in for `LockService` in unit tests: the three calls the decorators make
 * (`withLock`, `withLocks`, `withLease`), each running the method's body at once and
 * resolving its result. Plain functions: spy on them with your test runner
 * (`jest.spyOn(mock, 'withLock')`), or replace one (`mock.withLock = async () => undefined`
 * plays a lock held elsewhere under `ifLocked: 'skip'`).
 */
export type LockServiceMock = Required<LockServiceLike>;

/** Options of `createLockServiceMock`. */
export interface LockServiceMockOptions {
  /**
   * Whether `@WhenLeader` methods run, as on the leading instance (default `true`), or
   * resolve `undefined` without running, as on every other instance.
   */
  readonly leading?: boolean;
}

/**
 * A `LockService` mock for the usual Nest unit tests, without ZooKeeper or `ZkLockModule`:
 * `Test.createTestingModule({ providers: [MyService, { provide: LockService, useValue:
 * createLockServiceMock() }] })`, or `new MyService(mock)` for a class that keeps the
 * `LockService` it is given in a field. Its decorated methods then run their bodies with
 * no lock. For lock behaviour itself (waiting, skipping, losing a lock), use
 * `ZkLockModule.forTesting()`.
 */
export function createLockServiceMock(options: LockServiceMockOptions = {}): LockServiceMock {
  assertKnownOptions(options, ['leading'], 'createLockServiceMock');
  const { leading = true } = options;
  if (typeof leading !== 'boolean') throw new InvalidOptionError('leading', leading, 'true or false');
  const run = async <T>(_name: unknown, fn: () => T | Promise<T>): Promise<T> => fn();
  const mock: LockServiceMock = { withLock: run, withLocks: run, withLease: run };
  leadershipRegistry.register(mock, { runAsLeader: (group, fn) => (leading ? run(group, fn) : undefined) });
  return mock;
}
