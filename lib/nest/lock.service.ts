import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';

import { ReentrantLocker } from '../core/context/reentrant-locker.js';
import type { ReentrancyOption } from '../core/context/reentrancy.option.js';
import type { RunAlwaysOptions, WithLockCallOptions } from '../core/context/with-lock.options.js';
import type { AcquireOptions, LockBackend, LockContender, LockHandle } from '../core/recipe/lock-backend.interface.js';
import { lockLogEvents } from './lock-log.events.js';
import { lockServiceRegistry, type LockRunner } from './lock-service.registry.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

/**
 * Distributed read/write locks for this application, shared by all its instances.
 * Calls without `timeoutMs` wait up to the module's `acquireTimeoutMs`. Reentrant per
 * async call chain: inside `withLock` (or a `@WithLock` method), taking the same lock
 * again neither waits nor creates a node.
 */
@Injectable()
export class LockService implements LockRunner, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly locker: ReentrantLocker;

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
  ) {
    this.locker = new ReentrantLocker(backend, options.acquireTimeoutMs, lockLogEvents);
  }

  /**
   * Resolves with a held lock, or rejects with `LockTimeoutError` (`timeoutMs: 0`: at once
   * if taken), `LockAbortedError` (`signal`), `LockUpgradeError` (write inside read), or
   * `LockReentryError` (`reentrant: false` inside a chain that holds the lock).
   */
  acquire(name: string, options?: AcquireOptions & ReentrancyOption): Promise<LockHandle> {
    return this.locker.acquire(name, options);
  }

  /** A held lock, or `null` at once if another holder has it. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'> & ReentrancyOption): Promise<LockHandle | null> {
    return this.locker.tryAcquire(name, options);
  }

  /**
   * Runs `fn(handle)` holding the lock, releases it when `fn` returns or throws, and returns
   * `fn`'s result. If the lock is lost meanwhile, rejects with `LockLostError` once `fn`
   * settles (a warning is logged; `onLockLost: 'ignore'` returns the result anyway). With
   * `ifLocked: 'skip'`, resolves `undefined` without running `fn` when the lock is taken.
   */
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: RunAlwaysOptions): Promise<T>;
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options: WithLockCallOptions): Promise<T | undefined>;
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: WithLockCallOptions): Promise<T | undefined> {
    return this.locker.withLock(name, fn, options as WithLockCallOptions);
  }

  /**
   * Runs `fn` as the holder of `handle` (from `acquire`), so that taking the same lock
   * inside is reentrant instead of waiting for itself; `handle` stays held afterwards.
   */
  runHolding<T>(handle: LockHandle, fn: () => T | Promise<T>): Promise<T> {
    return this.locker.runHolding(handle, fn);
  }

  /** Holders and waiters of a lock, in queue order, with the identity each one wrote. */
  contenders(name: string): Promise<LockContender[]> {
    return this.backend.contenders(name);
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
