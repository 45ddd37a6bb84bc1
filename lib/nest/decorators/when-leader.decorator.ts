import { Logger } from '@nestjs/common';

import type { OnLockLost } from '../../core/reentrancy/call-options.js';
import { type LockLostError, InvalidLeaderGroupError } from '../../core/errors/errors.js';
import { assertKnownOptions } from '../../core/errors/unknown-option.js';
import { leaderLockName } from '../../core/leader/leader-group.js';
import { resolveLeaderWorkOptions } from '../../core/leader/leader-work.js';
import { copyMethodMetadata, WHEN_LEADER_METADATA, methodLabel } from './decorated-methods.js';
import { WhenLeaderUsageError, ZkLockModuleMissingError } from '../errors/errors.js';
import { leadershipMessages } from '../errors/messages.js';
import { leadershipRegistry, lockServiceRegistry } from '../service-registry.js';

/** Metadata key marking a method wrapped by `@WhenLeader` (value: its group). */
export { WHEN_LEADER_METADATA };

const logger = new Logger('ZkLock');

/** Options of `@WhenLeader`. */
export interface WhenLeaderOptions {
  /**
   * When the term of leadership the call started under ends while the method runs (the
   * leader lock lost, or the instance stepped down): `reject` (default) rejects with that
   * `LockLostError` once the method settles, whatever it returned (HTTP 503, or its code
   * in RPC); `ignore` returns the method's result anyway. Either way a warning is logged.
   */
  readonly onLockLost?: OnLockLost;
}

/**
 * Runs the method only on the instance that leads `group` at call time (checked against
 * the clock); elsewhere it resolves `undefined` without running (the method becomes
 * async). The application joins `group` at start-up. What holds:
 *
 * - a term ends (its signal aborts) before another instance can lead: read it inside the
 *   method with `LeadershipService.term(group)`, which is the term the call started under,
 *   and pass its `signal` and `fencingToken` to the method's I/O;
 * - at shutdown, the instance waits for its running `@WhenLeader` methods (up to the
 *   module's `shutdownGraceMs`) before it steps down, so the next leader starts after them;
 * - a call whose term ended while it ran (lost, or the grace ran out) rejects with the
 *   `LockLostError` once it settles, unless `onLockLost: 'ignore'`.
 *
 * A lost term cannot wait: by then another instance may lead. Only fencing keeps such a
 * method's late writes out.
 *
 * ```ts
 * @Cron('0 3 * * *')
 * @WhenLeader('nightly-report')
 * async report() { … }
 * ```
 */
export function WhenLeader(group: string, options?: WhenLeaderOptions): MethodDecorator {
  checkGroup(group);
  if (options !== undefined && typeof options === 'object' && options !== null)
    assertKnownOptions(options, ['onLockLost'], '@WhenLeader');
  const { onLockLost } = resolveLeaderWorkOptions(options);
  return (target, key, descriptor) => {
    const method = methodLabel(target, key);
    const original = descriptor?.value;
    if (typeof original !== 'function') throw new WhenLeaderUsageError(leadershipMessages.notAMethod(method));
    const work = {
      onLockLost,
      onLost: (error: LockLostError, ignored: boolean) =>
        logger.warn(leadershipMessages.lost(method, group, error, ignored)),
    };
    const wrapped = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const lockService = lockServiceRegistry.find(this);
      if (typeof lockService === 'string') throw new ZkLockModuleMissingError(method, lockService, '@WhenLeader');
      // After its application's shutdown began, an instance leads nothing.
      const run = leadershipRegistry
        .find(lockService)
        ?.runAsLeader(group, () => lockServiceRegistry.runFor(lockService, () => original.apply(this, args)), work);
      if (!run) logger.verbose(leadershipMessages.skipped(method, group)); // routine on every other instance
      return run;
    };
    copyMethodMetadata(original, wrapped);
    Reflect.defineMetadata?.(WHEN_LEADER_METADATA, group, wrapped);
    (descriptor as TypedPropertyDescriptor<unknown>).value = wrapped;
    return descriptor;
  };
}

function checkGroup(group: unknown): void {
  if (typeof group !== 'string' || group === '') throw new WhenLeaderUsageError(leadershipMessages.needsGroup(group));
  try {
    leaderLockName(group);
  } catch (error) {
    if (!(error instanceof InvalidLeaderGroupError)) throw error;
    throw new WhenLeaderUsageError(leadershipMessages.badGroup(error.message), { cause: error });
  }
}
