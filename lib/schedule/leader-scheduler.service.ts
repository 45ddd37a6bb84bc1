import {
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, ModulesContainer } from '@nestjs/core';
import { SchedulerRegistry, type CronOptions } from '@nestjs/schedule';

import { InvalidOptionError } from '../core/errors/errors.js';
import { assertKnownOptions } from '../core/errors/unknown-option.js';
import { methodsOf } from '../nest/decorators/decorated-methods.js';
import { LeaderJobError } from '../nest/errors/errors.js';
import { nestMessages } from '../nest/errors/messages.js';
import { LeadershipService } from '../nest/leadership.service.js';
import { LockService } from '../nest/lock.service.js';
import { instanceSeenBy, type NestModuleLike } from '../nest/module-visibility.js';
import { LEADER_ONLY_METADATA } from './leader-only.decorator.js';

/** Options of `LeaderScheduler.followLeadership`. */
export interface FollowLeadershipOptions {
  /** Names of cron jobs in `SchedulerRegistry` that run only while this instance leads the group. */
  readonly cronJobs: readonly string[];
}

/** The parts of Nest's `InstanceWrapper` this file reads. */
interface WrapperLike {
  readonly metatype: unknown;
  readonly host?: NestModuleLike;
}

// @nestjs/schedule exports neither its metadata keys nor its SchedulerType enum; these are
// what its decorators set (the same from v4 to v12).
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
const SchedulerType = { CRON: 1, TIMEOUT: 2, INTERVAL: 3 } as const;
const SCHEDULE_CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';

/** `@Cron` options as stored: `runOnInit` is passed on to the `CronJob` though not in the type. */
type StoredCronOptions = CronOptions & { runOnInit?: boolean };

/**
 * `@nestjs/schedule`'s orchestrator reads `disabled` from the `@Cron` metadata object once,
 * when it mounts the job (its `onApplicationBootstrap`, before ours). That object belongs to
 * the class, shared by every application in the process: so a scheduler marks it disabled
 * only from its module init until its application's jobs are mounted, and the last
 * scheduler to unmark it puts back what the author wrote. Here: the options marked now,
 * each with the schedulers between those two hooks and the author's own `disabled`
 * (as opposed to a job its author disabled, which stays stopped and is not marked).
 */
const marked = new WeakMap<
  StoredCronOptions,
  { readonly by: Set<LeaderScheduler>; readonly authors: boolean | undefined }
>();

/**
 * Starts and stops `@nestjs/schedule` cron jobs with this instance's leadership of a group,
 * so that a follower's jobs never wake: `@LeaderOnly` jobs, and run-time jobs given to
 * `followLeadership`. A job is stopped on every instance at start-up (a `@LeaderOnly`
 * job is registered stopped: the orchestrator never starts it), started when this instance
 * gains leadership, and stopped when it loses it, synchronously, before the leader lock is
 * released (so before another instance can lead and start its own), and at shutdown.
 * Provide it beside `ScheduleModule.forRoot()` and `ZkLockModule`.
 *
 * A `@LeaderOnly` job is registered stopped by marking its `@Cron` options disabled from
 * this provider's module init until the application's jobs are mounted. Those options
 * belong to the class: an application without `LeaderScheduler` that mounts the same
 * class's jobs while another one is starting (two started at once) registers them stopped
 * too. Started one after the other, each application reads the options as their author
 * wrote them.
 */
@Injectable()
export class LeaderScheduler
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /** Job names per group. */
  private readonly followed = new Map<string, Set<string>>();
  private readonly unsubscribes: Array<() => void> = [];
  private state: 'created' | 'running' | 'closed' = 'created';
  /** The `@Cron` options this scheduler marked disabled, until its application mounted them. */
  private readonly marks: StoredCronOptions[] = [];

  private readonly discovery: DiscoveryService;

  constructor(
    // DiscoveryService itself is only in modules that import DiscoveryModule; this one is in every module.
    modules: ModulesContainer,
    private readonly lockService: LockService,
    private readonly leadership: LeadershipService,
    private readonly registry: SchedulerRegistry,
  ) {
    this.discovery = new DiscoveryService(modules);
  }

  /**
   * Makes the cron jobs named `cronJobs` (already in `SchedulerRegistry`) run only while
   * this instance leads `group`: stopped at once unless it leads, started on gaining
   * leadership, stopped on losing it. Joins the election of `group`. Create the jobs with
   * `start: false`. Throws `LeaderJobError` (following none) if a job does not exist,
   * `InvalidOptionError` for bad options, `InvalidLeaderGroupError` for a bad group.
   */
  followLeadership(group: string, options: FollowLeadershipOptions): void {
    assertKnownOptions(options, ['cronJobs'], 'followLeadership');
    if (!Array.isArray(options.cronJobs))
      throw new InvalidOptionError('cronJobs', options.cronJobs, 'an array of names of cron jobs in SchedulerRegistry');
    for (const name of options.cronJobs) {
      if (typeof name !== 'string' || !this.registry.doesExist('cron', name))
        throw new LeaderJobError(nestMessages.leaderJob.unknownJob(group, name));
    }
    this.leadership.join(group);
    this.follow(group, options.cronJobs);
    this.apply(group);
  }

  /** Before any bootstrap hook, so before `@nestjs/schedule` mounts (and would start) the jobs. */
  onModuleInit(): void {
    const found: Array<{ group: string; name: string; options: StoredCronOptions }> = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()] as unknown as WrapperLike[];
    for (const { metatype, host } of wrappers) {
      if (typeof metatype !== 'function' || !host || instanceSeenBy(host, LockService) !== this.lockService) continue;
      for (const method of methodsOf(metatype)) {
        const group: unknown = Reflect.getOwnMetadata?.(LEADER_ONLY_METADATA, method);
        if (typeof group === 'string') found.push({ group, ...cronJobOf(method, `${metatype.name}.${method.name}`) });
      }
    }
    // Checked first, so a misuse fails start-up with nothing changed.
    for (const { group, name, options } of found) {
      const mark = marked.get(options);
      if (options.disabled && !mark) continue; // its author's: it stays stopped
      if (mark) mark.by.add(this);
      else marked.set(options, { by: new Set([this]), authors: options.disabled });
      options.disabled = true;
      this.marks.push(options);
      this.follow(group, [name]);
    }
  }

  /**
   * The orchestrator (global, so bootstrapped first) has mounted the jobs, stopped: the
   * marks go (another application mounting the class later reads its author's options),
   * and this leader's jobs start.
   */
  onApplicationBootstrap(): void {
    this.unmark();
    if (this.state === 'created') this.state = 'running';
    for (const group of this.followed.keys()) this.apply(group);
  }

  /** Runs before `LeadershipService` steps down (this provider's module is nearer the root). */
  beforeApplicationShutdown(): void {
    this.state = 'closed';
    for (const group of this.followed.keys()) this.apply(group);
  }

  /** Unmarks too: an application whose start failed after module init never bootstrapped. */
  onApplicationShutdown(): void {
    this.unmark();
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
  }

  /** Gives the `@Cron` options back as their author wrote them, once no other scheduler's mark is on them. */
  private unmark(): void {
    for (const options of this.marks.splice(0)) {
      const mark = marked.get(options);
      if (!mark?.by.delete(this) || mark.by.size > 0) continue;
      marked.delete(options);
      if (mark.authors === undefined) delete options.disabled;
      else options.disabled = mark.authors;
    }
  }

  private follow(group: string, names: readonly string[]): void {
    let jobs = this.followed.get(group);
    if (!jobs) {
      jobs = new Set();
      this.followed.set(group, jobs);
      // Told synchronously, and of a loss before the lock is released.
      this.unsubscribes.push(this.leadership.onChange(group, () => this.apply(group)));
    }
    for (const name of names) jobs.add(name);
  }

  /** Starts the group's jobs if this instance leads it now (checked against the clock), else stops them. */
  private apply(group: string): void {
    const leading = this.state === 'running' && this.leadership.isLeader(group);
    for (const name of this.followed.get(group) ?? []) {
      // Gone: deleted by its owner, or by the orchestrator at shutdown.
      if (!this.registry.doesExist('cron', name)) continue;
      const job = this.registry.getCronJob(name);
      if (leading) job.start();
      else if (job.isActive) void job.stop();
    }
  }
}

/** The job name and `@Cron` options of a `@LeaderOnly` method; throws `LeaderJobError` where it cannot follow leadership. */
function cronJobOf(method: Function, label: string): { name: string; options: StoredCronOptions } {
  const type: unknown = Reflect.getMetadata(SCHEDULER_TYPE, method);
  if (type === SchedulerType.INTERVAL || type === SchedulerType.TIMEOUT)
    throw new LeaderJobError(
      nestMessages.leaderJob.notRestartable(label, type === SchedulerType.INTERVAL ? 'an @Interval' : 'a @Timeout'),
    );
  const options = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, method) as StoredCronOptions | undefined;
  if (type !== SchedulerType.CRON || !options) throw new LeaderJobError(nestMessages.leaderJob.notCron(label));
  if (typeof options.name !== 'string' || options.name === '')
    throw new LeaderJobError(nestMessages.leaderJob.unnamed(label));
  for (const option of ['runOnInit', 'initialDelay'] as const) {
    if (options[option]) throw new LeaderJobError(nestMessages.leaderJob.startsEverywhere(label, option));
  }
  return { name: options.name, options };
}
