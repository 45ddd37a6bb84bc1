import type {
  MultiAcquireOptions,
  LockList,
  LeaseContender,
  LeaseHandle,
  ListedLock,
  MultiLockHandle,
  AcquireOptions,
  LockBackend,
  LockContender,
  LockHandle,
  ReadOptions,
} from '../core/port/lock-backend.js';
import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';

import { ReentrantLocker } from '../core/reentrancy/reentrant-locker.js';
import type {
  ReentrancyOption,
  RunAlwaysOptions,
  WithLockCallOptions,
  WithLocksCallOptions,
  LeaseCallOptions,
} from '../core/reentrancy/call-options.js';
import { lockLogEvents } from './lock-log.listener.js';
import { lockServiceRegistry, type LockServiceLike } from './service-registry.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

/**
 * Distributed read/write locks for this application, shared by all its instances.
 * Calls without `timeoutMs` wait up to the module's `acquireTimeoutMs`. Reentrant per
 * async call chain: inside `withLock` (or a `@WithLock` method), taking the same lock
 * again neither waits nor creates a node.
 */
@Injectable()
export class LockService
  implements LockServiceLike, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly locker: ReentrantLocker;

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
  ) {
    this.locker = new ReentrantLocker(backend, options.acquireTimeoutMs, lockLogEvents());
  }

  /**
   * Resolves with a held lock, or rejects with `LockTimeoutError` (`timeoutMs: 0`: at once
   * if taken), `LockAbortedError` (`signal`), `LockUpgradeError` (write inside read), or
   * `LockReentryError` (`reentrant: false` inside a chain that holds the lock), or
   * `LockUnavailableError` (no ZooKeeper session connected: at once for `timeoutMs: 0`,
   * else when the deadline passes with none connected).
   */
  acquire(name: string, options?: AcquireOptions & ReentrancyOption): Promise<LockHandle> {
    return this.locker.acquire(name, options);
  }

  /** A held lock, or `null` at once if another holder has it; `LockUnavailableError` at once if no session is connected. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'> & ReentrancyOption): Promise<LockHandle | null> {
    return this.locker.tryAcquire(name, options);
  }

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
  withLock<T>(
    name: string,
    fn: (handle: LockHandle) => T | Promise<T>,
    options?: WithLockCallOptions,
  ): Promise<T | undefined> {
    return this.locker.withLock(name, fn, options as WithLockCallOptions);
  }

  /**
   * Every lock of `locks` at once, all or nothing, without deadlock whatever order callers
   * list them in: `['orders/42', { name: 'stock/7', mode: 'read' }]`. One deadline for the
   * whole call; on any failure nothing stays held. Names this call chain holds are joined;
   * the others must sort after every lock it holds, or `LockOrderError` at once.
   */
  acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle> {
    return this.locker.acquireAll(locks, options);
  }

  /** `withLock` for several locks (taken as `acquireAll` takes them); the same `ifLocked`, `holdAtLeastMs`, `onLockLost`. */
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
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options?: WithLocksCallOptions,
  ): Promise<T | undefined> {
    return this.locker.withLocks(locks, fn, options as WithLocksCallOptions);
  }

  /**
   * One of `maxLeases` leases on `name`: at most `maxLeases` holders across every instance
   * at once, FIFO (e.g. to limit concurrent calls to a slow partner API). Every client
   * must pass the same `maxLeases`. Not reentrant: each call takes one more. Without
   * `timeoutMs`, waits `acquireTimeoutMs`.
   */
  acquireLease(name: string, options: LeaseCallOptions): Promise<LeaseHandle> {
    return this.locker.acquireLease(name, options);
  }

  /** Runs `fn(lease)` holding one lease of `name`; rejects with `LockLostError` if the lease was lost while `fn` ran. */
  withLease<T>(name: string, fn: (lease: LeaseHandle) => T | Promise<T>, options: LeaseCallOptions): Promise<T> {
    return this.locker.withLease(name, fn, options);
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

  /**
   * Runs `fn` as the holder of `handle` (from `acquire`), so that taking the same lock
   * inside is reentrant instead of waiting for itself; `handle` stays held afterwards.
   */
  runHolding<T>(handle: LockHandle, fn: () => T | Promise<T>): Promise<T> {
    return this.locker.runHolding(handle, fn);
  }

  /** Holders and waiters of a lock, in queue order, with the identity each one wrote. */
  contenders(name: string, options?: ReadOptions): Promise<LockContender[]> {
    return this.backend.contenders(name, this.readOptions(options));
  }

  /** A read's options with the module's `acquireTimeoutMs` when they name no `timeoutMs` (the backend checks them). */
  private readOptions(options: ReadOptions | undefined): ReadOptions | undefined {
    if (options === undefined) return { timeoutMs: this.options.acquireTimeoutMs };
    const named = typeof options !== 'object' || options === null || 'timeoutMs' in options;
    return named ? options : { ...options, timeoutMs: this.options.acquireTimeoutMs };
  }

  /** The lock this call chain holds under `name`, if any: e.g. its `fencingToken` inside `@WithLock`. */
  held(name: string): LockHandle | undefined {
    return this.locker.held(name);
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

  /** Waits for locks fail now, so that requests still waiting end before the server closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.locker.cancelWaits();
  }

  /**
   * Lets running `withLock` bodies finish (up to `shutdownGraceMs`), then releases held
   * locks, aborting the signal of any still held first (other instances get them at once,
   * not after the session timeout), and closes the session.
   */
  async onApplicationShutdown(): Promise<void> {
    lockServiceRegistry.remove(this);
    await this.locker.drain(this.options.shutdownGraceMs);
    await this.backend.close();
  }
}
