import type { AdmitsUndefined } from '../nest/decorators/locked-method.js';
import { WhenLeader, type WhenLeaderOptions } from '../nest/decorators/when-leader.decorator.js';

/** Metadata key of `@LeaderOnly`: the group whose leadership the method's job follows. */
export const LEADER_ONLY_METADATA = Symbol.for('nestjs-zk-lock.leader-only');

/**
 * Makes a named `@Cron` job follow the leadership of `group`: registered stopped on every
 * instance, started on the instance that gains leadership, stopped when it loses it or
 * shuts down, so a follower's job never even wakes. Needs `LeaderScheduler` among the
 * module's providers (with `ScheduleModule` and `ZkLockModule`). The method is also a
 * `@WhenLeader(group)` method: a tick runs under the term of leadership it started in,
 * shutdown waits for it, and a tick that somehow starts off leadership runs nothing.
 * Order relative to `@Cron` does not matter.
 *
 * ```ts
 * @Cron(CronExpression.EVERY_MINUTE, { name: 'report' })
 * @LeaderOnly('reports')
 * async report() { … }
 * ```
 */
export function LeaderOnly(group: string, options?: WhenLeaderOptions): LeaderJobDecorator {
  const whenLeader = WhenLeader(group, options) as (target: object, key: string | symbol, descriptor: object) => void;
  return (target, key, descriptor) => {
    whenLeader(target, key, descriptor);
    // On the wrapper that @WhenLeader put in place, where @Cron's metadata is too.
    Reflect.defineMetadata?.(LEADER_ONLY_METADATA, group, descriptor.value as object);
  };
}

/**
 * What `@LeaderOnly` accepts: a job method, synchronous (`void`: the scheduler ignores what
 * it returns, and so can its type) or async with a result type that admits `undefined`
 * (a tick off leadership resolves it). The compiler refuses a method that returns a value
 * synchronously, which would become a Promise at run time.
 */
export type LeaderJobDecorator = <M extends (...args: any[]) => void | Promise<unknown>>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M> &
    AdmitsUndefined<
      M,
      '@LeaderOnly resolves undefined where this instance does not lead: declare Promise<T | undefined>'
    >,
) => void;
