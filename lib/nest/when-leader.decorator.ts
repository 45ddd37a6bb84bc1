import { Logger } from '@nestjs/common';

import { InvalidLeaderGroupError } from '../core/leader/invalid-leader-group.error.js';
import { leaderLockName } from '../core/leader/leader-group.js';
import { copyMethodMetadata } from './copy-method-metadata.js';
import { WHEN_LEADER_METADATA } from './decorated-methods.js';
import { WhenLeaderUsageError } from './errors/when-leader-usage.error.js';
import { ZkLockModuleMissingError } from './errors/zk-lock-module-missing.error.js';
import { leadershipMessages } from './leadership.messages.js';
import { leadershipRegistry } from './leadership.registry.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { methodLabel } from './method-label.js';

/** Metadata key marking a method wrapped by `@WhenLeader` (value: its group). */
export { WHEN_LEADER_METADATA };

const logger = new Logger('ZkLock');

/**
 * Runs the method only on the instance that leads `group` at call time; elsewhere it
 * resolves `undefined` without running (the method becomes async). The application joins
 * `group` at start-up. For work that outlasts the call, watch
 * `LeadershipService.signal(group)`: it aborts when leadership ends.
 *
 * ```ts
 * @Cron('0 3 * * *')
 * @WhenLeader('nightly-report')
 * async report() { … }
 * ```
 */
export function WhenLeader(group: string): MethodDecorator {
  checkGroup(group);
  return (target, key, descriptor) => {
    const method = methodLabel(target, key);
    const original = descriptor?.value;
    if (typeof original !== 'function') throw new WhenLeaderUsageError(leadershipMessages.notAMethod(method));
    const wrapped = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const lockService = lockServiceRegistry.find(this);
      if (typeof lockService === 'string') throw new ZkLockModuleMissingError(method, lockService, '@WhenLeader');
      // After its application's shutdown began, an instance leads nothing.
      if (!leadershipRegistry.find(lockService)?.isLeader(group)) {
        logger.debug(leadershipMessages.skipped(method, group));
        return undefined;
      }
      return lockServiceRegistry.runFor(lockService, () => original.apply(this, args));
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
