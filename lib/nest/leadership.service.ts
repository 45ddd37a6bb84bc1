import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Observable, type Subscriber } from 'rxjs';

import { NotLeaderError } from '../core/errors/errors.js';
import type { JsonValue, LeaderInfo } from '../core/leader/leader-directory.js';
import { leaderLockName } from '../core/leader/leader-group.js';

import { LeaderElection, type LeadershipListener } from '../core/leader/leader-election.js';
import type { LeaderTerm } from '../core/leader/leadership-term.js';
import type { LockBackend } from '../core/port/lock-backend.js';
import { BootstrapLifecycle } from './bootstrap-lifecycle.js';
import { leadershipRegistry, type LeadershipLike } from './service-registry.js';
import { LockService } from './lock.service.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

/**
 * Leader election for this application's instances: one instance at a time leads each
 * group (see `LeaderElection`). Groups of `@WhenLeader` methods are joined at start-up;
 * others with `join()`. Elections start at bootstrap, once the backend is connected. At
 * shutdown a leader lets its running `@WhenLeader` methods finish (up to
 * `shutdownGraceMs`), then steps down (its term's signal aborts first) and hands over at once.
 */
@Injectable()
export class LeadershipService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly elections = new Map<string, LeaderElection>();
  private readonly joined = new Set<string>();
  private readonly lifecycle: BootstrapLifecycle;
  /** Subscriptions of `observe()`: completed at shutdown, before the client closes. */
  private readonly observers = new Map<Subscriber<LeaderInfo | null>, () => void>();
  /** How `@WhenLeader` runs a method here (not public API: the decorator is). */
  private readonly runner: LeadershipLike = {
    runAsLeader: (group, fn, options) => this.elections.get(group)?.runAsLeader(fn, options),
  };

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    private readonly lockService: LockService,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
  ) {
    this.lifecycle = new BootstrapLifecycle(backend);
    leadershipRegistry.register(lockService, this.runner);
  }

  /**
   * Joins the election of `group` (idempotent); before bootstrap it starts at bootstrap.
   * Throws `InvalidLeaderGroupError` for a bad group.
   */
  join(group: string): void {
    const election = this.electionOf(group);
    this.joined.add(group);
    if (this.lifecycle.running) election.start();
  }

  /** Leaves the election of `group`; if this instance leads it, it steps down at once. */
  async leave(group: string): Promise<void> {
    this.joined.delete(group);
    await this.elections.get(group)?.stop();
  }

  /** Whether this instance leads `group` now (checked against the clock at this moment). */
  isLeader(group: string): boolean {
    return this.elections.get(group)?.isLeader ?? false;
  }

  /** The identity of the instance leading `group`, or `null` when none does (whether or not this one joined). */
  async leader(group: string): Promise<string | null> {
    return (this.elections.get(group) ?? new LeaderElection(this.backend, group)).leader();
  }

  /**
   * Who leads `group` (its identity, the term's fencing token, what it proclaimed), or
   * `null` while nobody leads: now, then at every change (see `LeaderElection.observe`),
   * whether or not this instance joined the group. Each subscription watches on its own
   * until unsubscribed; all complete at shutdown. Throws `InvalidLeaderGroupError` for a bad group.
   */
  observe(group: string): Observable<LeaderInfo | null> {
    leaderLockName(group);
    return new Observable<LeaderInfo | null>((subscriber) => {
      if (this.lifecycle.closed) return subscriber.complete();
      const election = this.elections.get(group) ?? new LeaderElection(this.backend, group);
      this.observers.set(
        subscriber,
        election.observe((leader) => subscriber.next(leader)),
      );
      return () => {
        this.observers.get(subscriber)?.();
        this.observers.delete(subscriber);
      };
    });
  }

  /**
   * Says `value` as the leader of `group`, for its observers (see `LeaderElection.proclaim`).
   * Rejects with `NotLeaderError` when this instance does not lead `group` now (nothing is
   * written), `InvalidOptionError` for a value that is not JSON or too large.
   */
  async proclaim(group: string, value: JsonValue): Promise<void> {
    leaderLockName(group);
    const election = this.elections.get(group);
    if (!election) throw new NotLeaderError(group);
    await election.proclaim(value);
  }

  /**
   * The term of leadership of `group` to pass to I/O: its `signal` (aborts with a
   * `LockLostError` when the term ends) and `fencingToken` (the leader lock's, rising with
   * every term). Inside a `@WhenLeader` method of `group`, the term the call started
   * under, even after it ended and another began; elsewhere the current one, `undefined`
   * when this instance does not lead `group`. One object per term.
   */
  term(group: string): LeaderTerm | undefined {
    return this.elections.get(group)?.term;
  }

  /** The signal of `term(group)`: aborts when that term of leadership ends; `undefined` when not leading. */
  signal(group: string): AbortSignal | undefined {
    return this.term(group)?.signal;
  }

  /** Calls `listener` whenever this instance starts or stops leading `group`; returns the unsubscribe. */
  onChange(group: string, listener: LeadershipListener): () => void {
    return this.electionOf(group).onChange(listener);
  }

  /**
   * Starts the elections joined so far once the backend is connected. `LockService`
   * connects it during bootstrap too; `start()` is idempotent, so both wait for the same
   * connection, and a failure is left to `LockService` to report (it fails start-up).
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.lifecycle.bootstrap(this.joined.size > 0))) return;
    for (const group of this.joined) this.elections.get(group)?.start();
  }

  /**
   * Every election stops, and no `@WhenLeader` method starts any more. A leader waits for
   * its running `@WhenLeader` methods (up to `shutdownGraceMs`), then steps down: the
   * term's signal aborts, then the lock is released. All before `LockService` closes the
   * client in `onApplicationShutdown`, which Nest calls after every module's
   * `beforeApplicationShutdown`.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.shutdown();
    leadershipRegistry.unregister(this.lockService, this.runner);
    for (const [subscriber, unsubscribe] of this.observers) {
      unsubscribe();
      subscriber.complete();
    }
    this.observers.clear();
    const graceMs = this.options.shutdownGraceMs;
    await Promise.all([...this.elections.values()].map((election) => election.stop({ graceMs })));
  }

  private electionOf(group: string): LeaderElection {
    let election = this.elections.get(group);
    if (!election) {
      election = new LeaderElection(this.backend, group);
      this.elections.set(group, election);
    }
    return election;
  }
}
