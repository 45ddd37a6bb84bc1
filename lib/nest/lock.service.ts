import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';

import { ReentrantLocker } from '../core/context/reentrant-locker.js';
import type { AcquireOptions, LockBackend, LockContender, LockHandle } from '../core/recipe/lock-backend.interface.js';
import { lockServiceRegistry, type LockRunner } from './lock-service.registry.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { ResolvedZkLockModuleOptions } from './zk-lock-module.options.js';

/**
 * Distributed read/write locks for this application, shared by all its instances.
 * Calls without `timeoutMs` wait up to the module's `acquireTimeoutMs`. Reentrant per
 * async call chain: inside `withLock` (or a `@WithLock` method), taking the same lock
 * again neither waits nor creates a node.
 */
@Injectable()
export class LockService implements LockRunner, OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly locker: ReentrantLocker;

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: ResolvedZkLockModuleOptions,
  ) {
    this.locker = new ReentrantLocker(backend, options.acquireTimeoutMs);
    lockServiceRegistry.register(this);
  }

  /**
   * Resolves with a held lock, or rejects with `LockTimeoutError` (`timeoutMs: 0`: at once
   * if taken), `LockAbortedError` (`signal`), or `LockUpgradeError` (write inside read).
   */
  acquire(name: string, options?: AcquireOptions): Promise<LockHandle> {
    return this.locker.acquire(name, options);
  }

  /** A held lock, or `null` at once if another holder has it. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<LockHandle | null> {
    return this.locker.tryAcquire(name, options);
  }

  /** Runs `fn(handle)` holding the lock, releases it when `fn` returns or throws, and returns `fn`'s result. */
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.locker.withLock(name, fn, options);
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
   * Connects to ZooKeeper while the application initialises, failing start-up with a
   * `ZkConnectionError` naming the connection string when no server answers.
   */
  async onModuleInit(): Promise<void> {
    try {
      await this.backend.start();
    } catch (error) {
      lockServiceRegistry.unregister(this);
      throw error;
    }
  }

  /** Waits for locks fail now, so that requests still waiting end before the server closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.backend.cancelWaits();
  }

  /**
   * Lets running `withLock` bodies finish (up to `shutdownGraceMs`), then releases held
   * locks, aborting the signal of any still held first (other instances get them at once,
   * not after the session timeout), and closes the session.
   */
  async onApplicationShutdown(): Promise<void> {
    lockServiceRegistry.unregister(this);
    await this.locker.drain(this.options.shutdownGraceMs);
    await this.backend.close();
  }
}
