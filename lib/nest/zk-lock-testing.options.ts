import { InvalidOptionError } from '../core/errors/errors.js';
import { assertKnownOptions } from '../core/errors/unknown-option.js';
import { InMemoryLockBackend } from '../core/memory/in-memory-lock-backend.js';
import type { InMemoryLockStore } from '../core/memory/in-memory-lock-store.js';
import type { ReleaseMode } from '../core/port/lock-backend.js';
import { resolveReleaseMode } from '../core/port/options.js';
import { resolveServiceOptions, type LockServiceOptions, type ZkLockModuleOptions } from './zk-lock-module.options.js';

/** Options of `ZkLockModule.forTesting`: those of `LockService`, and the in-memory backend's. */
export interface ZkLockTestingOptions extends Pick<
  ZkLockModuleOptions,
  'acquireTimeoutMs' | 'httpErrors' | 'rpcErrors' | 'shutdownGraceMs' | 'maxHoldMs' | 'logLevels' | 'nodeFormat'
> {
  /**
   * Taken, and checked, as `forRoot`'s is (`"sent"` or `"confirmed"`), so that options
   * shared with `forRoot` type-check; in memory both behave the same: a release takes
   * effect as it resolves, with no answer to wait for. Allowed beside `backend`.
   */
  readonly release?: ReleaseMode;
  /** Shown by `contenders()` and `LeadershipService.leader()`. Default `host:pid:memory-<n>`. */
  readonly identity?: string;
  /**
   * Share one store between several applications in a test to make them instances of one
   * service (they then exclude each other). Default: a store of this application's own.
   */
  readonly store?: InMemoryLockStore;
  /**
   * The backend to use, e.g. to reach its test controls (`loseLock`, `expireSession`); or
   * get it with `app.get(ZK_LOCK_BACKEND)`. The application closes it at shutdown.
   */
  readonly backend?: InMemoryLockBackend;
  /** Make `LockService` injectable everywhere, as `forRoot`'s `isGlobal` does. */
  readonly isGlobal?: boolean;
}

const KNOWN = [
  'acquireTimeoutMs',
  'httpErrors',
  'rpcErrors',
  'shutdownGraceMs',
  'maxHoldMs',
  'logLevels',
  'identity',
  'store',
  'nodeFormat',
  'release',
  'backend',
  'isGlobal',
];

/** Checks the options like `forRoot` does; returns the service's options and the backend. */
export function resolveTestingOptions(options: ZkLockTestingOptions): {
  service: LockServiceOptions;
  backend: InMemoryLockBackend;
} {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, 'an object such as { acquireTimeoutMs: 1000 }');
  assertKnownOptions(options, KNOWN, 'ZkLockModule.forTesting');
  const { acquireTimeoutMs, httpErrors, rpcErrors, shutdownGraceMs, maxHoldMs, logLevels } = options;
  const { identity, store, nodeFormat, backend } = options;
  resolveReleaseMode(options.release); // checked only: it changes nothing in memory
  const service = resolveServiceOptions({
    acquireTimeoutMs,
    httpErrors,
    rpcErrors,
    shutdownGraceMs,
    maxHoldMs,
    logLevels,
  });
  if (backend !== undefined && !(backend instanceof InMemoryLockBackend))
    throw new InvalidOptionError('backend', backend, 'an InMemoryLockBackend');
  const own = Object.entries({ identity, store, nodeFormat }).filter(([, value]) => value !== undefined);
  if (backend && own.length > 0) {
    throw new InvalidOptionError(own[0][0], own[0][1], 'nothing when backend is given (set it on the backend)');
  }
  return { service, backend: backend ?? new InMemoryLockBackend(Object.fromEntries(own)) };
}
