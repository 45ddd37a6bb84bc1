import { InvalidOptionError } from '../core/errors/errors.js';
import { assertKnownOptions } from '../core/errors/unknown-option.js';
import { InMemoryLockBackend } from '../core/memory/in-memory-lock-backend.js';
import { LockService } from './lock.service.js';
import { leadershipRegistry, type LockServiceLike } from './service-registry.js';
import { resolveServiceOptions } from './zk-lock-module.options.js';

/**
 * What the decorators call on a `LockService` (`withLock`, `withLocks`, `withLease`): all a
 * mock of your own must implement. `createLockServiceMock()` gives a whole `LockService`.
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

/** The decorators' calls, own properties of each mock: spied on or replaced per mock, and still bound when detached. */
const DECORATOR_CALLS = ['withLock', 'withLocks', 'withLease'] as const satisfies readonly (keyof LockServiceMock)[];

/**
 * A `LockService` of its own: over a private in-memory backend, with no module and no
 * lifecycle (Nest's shutdown hooks leave it usable, so one mock serves test after test).
 */
class MockedLockService extends LockService {
  constructor() {
    super(new InMemoryLockBackend(), resolveServiceOptions({}));
    for (const call of DECORATOR_CALLS) {
      Object.defineProperty(this, call, {
        // Looked up at each call: a spy on `LockService.prototype` sees the mock's calls too.
        value: (...args: unknown[]): unknown =>
          (LockService.prototype[call] as (...args: unknown[]) => unknown).apply(this, args),
        writable: true,
        configurable: true,
        enumerable: false,
      });
    }
  }

  override async onApplicationBootstrap(): Promise<void> {}
  override async beforeApplicationShutdown(): Promise<void> {}
  override async onApplicationShutdown(): Promise<void> {}
}

/**
 * A `LockService` for the usual Nest unit tests, without ZooKeeper or `ZkLockModule`:
 * `Test.createTestingModule({ providers: [MyService, { provide: LockService, useValue:
 * createLockServiceMock() }] })`, or `new MyService(createLockServiceMock())` (its type is
 * `LockService`: no cast). Each mock holds its locks in memory, on its own: uncontended,
 * its decorated methods run at once; two calls on one name through the same mock exclude
 * each other as within one instance. `withLock`, `withLocks` and `withLease` are the
 * mock's own functions: spy on them (`jest.spyOn(mock, 'withLock')`) or replace one. For
 * lock behaviour across instances (a lock held elsewhere, a lost lock), use
 * `ZkLockModule.forTesting()`.
 */
export function createLockServiceMock(options: LockServiceMockOptions = {}): LockService {
  assertKnownOptions(options, ['leading'], 'createLockServiceMock');
  const { leading = true } = options;
  if (typeof leading !== 'boolean') throw new InvalidOptionError('leading', leading, 'true or false');
  const mock = new MockedLockService();
  const runNow = async <T>(fn: () => T | Promise<T>): Promise<T> => fn();
  leadershipRegistry.register(mock, { runAsLeader: (_group, fn) => (leading ? runNow(fn) : undefined) });
  return mock;
}
