import type {
  AcquireOptions,
  LeaseContender,
  LeaseHandle,
  ListedLock,
  LockBackend,
  LockContender,
  LockHandle,
  LockList,
  MultiAcquireOptions,
  MultiLockHandle,
  ReadOptions,
} from '../core/port/lock-backend.js';
import type {
  LeaseCallOptions,
  ReentrancyOption,
  RunAlwaysOptions,
  WithLockCallOptions,
  WithLocksCallOptions,
} from '../core/reentrancy/call-options.js';
import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';

import { ReentrantLocker } from '../core/reentrancy/reentrant-locker.js';
import { ZK_CLIENT_DEFAULTS, type ResolvedZkClientOptions } from '../core/zookeeper/session/zk-client-options.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { runOnce, type RunOnceOptions } from '../core/run-once/run-once.js';
import { lockLogEvents } from './lock-log.listener.js';
import { setLoggerOf, ZkLockLogger } from './lock-logger.js';
import { lockServiceRegistry, type LockServiceLike } from './service-registry.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import { defaultAcquireTimeoutMs, type LockServiceOptions } from './zk-lock-module.options.js';

/** The lock calls `LockService` forwards to its `ReentrantLocker` (declared in the interface below). */
const LOCKER_CALLS = [
  'acquire',
  'tryAcquire',
  'withLock',
  'acquireAll',
  'withLocks',
  'acquireLease',
  'withLease',
  'runHolding',
  'held',
] as const satisfies readonly (keyof ReentrantLocker & keyof LockService)[];

/**
 * The lock calls, declared as methods (so that a subclass or a spy can replace one) and
 * defined on the prototype below, where each forwards to the application's
 * `ReentrantLocker`. Calls without `timeoutMs` wait up to the module's `acquireTimeoutMs`.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the methods are defined on the prototype below
export interface LockService {
  /**
   * Resolves with a held lock, or rejects with `LockTimeoutError` (`timeoutMs: 0`: at once
   * if taken), `LockAbortedError` (`signal`), `LockUpgradeError` (write inside read), or
   * `LockReentryError` (`reentrant: false` inside a chain that holds the lock), or
   * `LockUnavailableError` (no ZooKeeper session connected: at once for `timeoutMs: 0`,
   * else when the deadline passes with none connected).
   */
  acquire(name: string, options?: AcquireOptions & ReentrancyOption): Promise<LockHandle>;

  /** A held lock, or `null` at once if another holder has it; `LockUnavailableError` at once if no session is connected. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'> & ReentrancyOption): Promise<LockHandle | null>;

  /**
   * Runs `fn(handle)` holding the lock, releases it when `fn` returns or throws, and returns
   * `fn`'s result. If the lock is lost meanwhile, rejects with `LockLostError` once `fn`
   * settles (a warning is logged; `onLockLost: 'ignore'` returns the result anyway). With
   * `ifLocked: 'skip'`, resolves `undefined` without running `fn` when the lock is taken,
   * or when no ZooKeeper session is connected to ask (a warning once per outage).
   */
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: RunAlwaysOptions): Promise<T>;
  withLock<T>(
    name: string,
    fn: (handle: LockHandle) => T | Promise<T>,
    options: WithLockCallOptions,
  ): Promise<T | undefined>;

  /**
   * Every lock of `locks` at once, all or nothing, without deadlock whatever order callers
   * list them in: `['orders/42', { name: 'stock/7', mode: 'read' }]`. One deadline for the
   * whole call; on any failure nothing stays held. Names this call chain holds are joined;
   * the others must sort after every lock it holds, or `LockOrderError` at once.
   * `maxHoldMs` (or the module's) limits the group from the moment every lock is held.
   */
  acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle>;

  /**
   * `withLock` for several locks (taken as `acquireAll` takes them); the same `ifLocked`,
   * `holdAtLeastMs`, `onLockLost` and `maxHoldMs` (its clock starts once every lock is held).
   */
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options?: WithLocksCallOptions & { readonly ifLocked?: 'wait' | 'throw' },
  ): Promise<T>;
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options: WithLocksCallOptions,
  ): Promise<T | undefined>;

  /**
   * One of `maxLeases` leases on `name`: at most `maxLeases` holders across every instance
   * at once, FIFO (e.g. to limit concurrent calls to a slow partner API). Every client
   * must pass the same `maxLeases`. Not reentrant: each call takes one more. Without
   * `timeoutMs`, waits `acquireTimeoutMs`.
   */
  acquireLease(name: string, options: LeaseCallOptions): Promise<LeaseHandle>;

  /** Runs `fn(lease)` holding one lease of `name`; rejects with `LockLostError` if the lease was lost while `fn` ran. */
  withLease<T>(name: string, fn: (lease: LeaseHandle) => T | Promise<T>, options: LeaseCallOptions): Promise<T>;

  /**
   * Runs `fn` as the holder of `handle` (from `acquire`), so that taking the same lock
   * inside is reentrant instead of waiting for itself; `handle` stays held afterwards.
   */
  runHolding<T>(handle: LockHandle, fn: () => T | Promise<T>): Promise<T>;

  /** The lock this call chain holds under `name`, if any: e.g. its `fencingToken` inside `@WithLock`. */
  held(name: string): LockHandle | undefined;
}

/**
 * Distributed read/write locks for this application, shared by all its instances.
 * Calls without `timeoutMs` wait up to the module's `acquireTimeoutMs`. Reentrant per
 * async call chain: inside `withLock` (or a `@WithLock` method), taking the same lock
 * again neither waits nor creates a node.
 */
@Injectable()
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class LockService
  implements LockServiceLike, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /** Every lock call goes through it: reentrancy, `ifLocked`, `holdAtLeastMs`, and the shutdown's drain. */
  private readonly locker: ReentrantLocker;

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
  ) {
    const logger = new ZkLockLogger(options.logLevels);
    setLoggerOf(this, logger);
    const timeout = options.acquireTimeoutMs ?? (() => this.defaultAcquireTimeoutMs());
    this.locker = new ReentrantLocker(backend, timeout, lockLogEvents(logger), options.maxHoldMs);
  }

  /**
   * `acquireTimeoutMs`'s default, from the session timeout the server granted (it may
   * differ from the one asked for, and from one server to another), else the one asked for.
   */
  private defaultAcquireTimeoutMs(): number {
    const granted = (this.backend as Partial<Pick<ZkLockBackend, 'status'>>).status?.().timeoutMs;
    const asked = (this.options as Partial<ResolvedZkClientOptions>).sessionTimeoutMs;
    return defaultAcquireTimeoutMs(granted ?? asked ?? ZK_CLIENT_DEFAULTS.sessionTimeoutMs);
  }

  /**
   * Holders and waiters of the lease semaphore `name`, in queue order. Like every read here,
   * rejects with `LockUnavailableError` (503) when no ZooKeeper session is connected within
   * `timeoutMs` (default: `acquireTimeoutMs`).
   */
  leaseContenders(name: string, options?: ReadOptions): Promise<LeaseContender[]> {
    return this.backend.leaseContenders(name, this.readOptions(options));
  }

  /**
   * Asks every current holder of `name` to release it (Curator's wire form: holders that
   * took it with `revocable: true` see `handle.revocation` abort); resolves with how many
   * were asked. Cooperative: nothing is taken from anyone.
   */
  requestRevocation(name: string, options?: ReadOptions): Promise<number> {
    return this.backend.requestRevocation(name, this.readOptions(options));
  }

  /**
   * Every lock (and lease semaphore) whose name starts with `prefix` that has a holder or a
   * waiter, by name, each with its holders and waiters and since when they queued: for
   * admin endpoints and monitoring. Three round trips however many locks there are.
   */
  locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]> {
    return this.backend.locks(prefix, this.readOptions(options));
  }

  /** Holders and waiters of a lock, in queue order, with the identity each one wrote. */
  contenders(name: string, options?: ReadOptions): Promise<LockContender[]> {
    return this.backend.contenders(name, this.readOptions(options));
  }

  /**
   * Settles once every release this application has sent so far is confirmed by ZooKeeper
   * (or its session ended): `release()` and the end of `withLock` answer once the delete is
   * sent (`release: 'sent'`, the default). Await it in a test before reading ZooKeeper from
   * another connection. At once over `forTesting()`. Rejects with `LockUnavailableError`
   * once `timeoutMs` (default: the module's `acquireTimeoutMs`) passed with no session
   * connected and a release unconfirmed.
   */
  releasesConfirmed(options?: ReadOptions): Promise<void> {
    return this.backend.releasesConfirmed(this.readOptions(options));
  }

  /**
   * Runs a start-up step (a migration, a seed) on exactly one instance: `true` where `fn`
   * ran, `false` where another instance ran it, now or before. Every caller resolves once
   * the run completed, so call it in `onApplicationBootstrap` (or before `app.listen()`)
   * and readiness waits for it. Without `timeoutMs` it waits as long as the step takes, not
   * `acquireTimeoutMs`. A step that throws rejects here and is run again by the next
   * waiter (see `runOnce` and docs/guide.md, "Start-up steps").
   */
  runOnce(key: string, fn: (signal: AbortSignal) => unknown, options?: RunOnceOptions): Promise<boolean> {
    return runOnce(this.backend, key, fn, options);
  }

  /** A read's options with the module's `acquireTimeoutMs` when they name no `timeoutMs` (the backend checks them). */
  private readOptions(options: ReadOptions | undefined): ReadOptions | undefined {
    const timeoutMs = this.options.acquireTimeoutMs ?? this.defaultAcquireTimeoutMs();
    if (options === undefined) return { timeoutMs };
    const named = typeof options !== 'object' || options === null || 'timeoutMs' in options;
    return named ? options : { ...options, timeoutMs };
  }

  /**
   * Connects to ZooKeeper once every module initialised (or at the first lock call, if an
   * `onModuleInit` hook takes one), failing start-up with a `ZkConnectionError` naming the
   * connection string when no server answers. An application whose start fails before
   * (a provider or an `onModuleInit` hook throwing) has opened no connection.
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.backend.start();
    } catch (error) {
      lockServiceRegistry.remove(this);
      throw error;
    }
  }

  /**
   * True once the application began to shut down: new lock calls are refused from then on
   * (`LockClientClosedError`, 503 in HTTP) and HTTP answers carry `Connection: close`.
   */
  get shuttingDown(): boolean {
    return this.graceEndsAt !== undefined;
  }

  /** When the running bodies' `shutdownGraceMs` ends (`performance.now()`), once shutdown began. */
  private graceEndsAt: number | undefined;

  /**
   * Shutdown begins: from now on every new lock call is refused at once, and waits fail, so
   * that requests end (HTTP answers close their keep-alive connections) before the server
   * closes. Running bodies keep their locks; their `shutdownGraceMs` counts from here.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.graceEndsAt ??= performance.now() + this.options.shutdownGraceMs;
    await this.locker.cancelWaits();
  }

  /**
   * Lets running `withLock` bodies finish (within `shutdownGraceMs` of the moment shutdown
   * began), then releases held locks, aborting the signal of any still held first (other
   * instances get them at once, not after the session timeout), and closes the session.
   */
  async onApplicationShutdown(): Promise<void> {
    lockServiceRegistry.remove(this);
    const graceEndsAt = this.graceEndsAt ?? performance.now() + this.options.shutdownGraceMs;
    await this.locker.drain(Math.max(0, graceEndsAt - performance.now()));
    await this.backend.close();
  }
}

// Methods on the prototype, as a Nest service's are: `jest.spyOn(LockService.prototype, 'withLock')`
// and a subclass that overrides one both work. Each forwards to the application's locker.
for (const call of LOCKER_CALLS) {
  Object.defineProperty(LockService.prototype, call, {
    value: function (this: LockService, ...args: unknown[]): unknown {
      const { locker } = this as unknown as { locker: ReentrantLocker };
      return (locker[call] as (...args: unknown[]) => unknown).apply(locker, args);
    },
    writable: true,
    configurable: true,
  });
}
