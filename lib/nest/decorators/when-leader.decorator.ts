import type { OnLockLost } from '../../core/reentrancy/call-options.js';
import { type LockLostError, InvalidLeaderGroupError } from '../../core/errors/errors.js';
import { assertKnownOptions } from '../../core/errors/unknown-option.js';
import { leaderLockName } from '../../core/leader/leader-group.js';
import { resolveLeaderWorkOptions } from '../../core/leader/leader-work.js';
import { WhenLeaderUsageError } from '../errors/errors.js';
import { nestMessages } from '../errors/messages.js';
import { leadershipRegistry, lockServiceRegistry } from '../service-registry.js';
import { loggerOf } from '../lock-logger.js';
import { WHEN_LEADER_METADATA, wrapMethod } from './decorated-methods.js';
import type { AdmitsUndefined, AsyncMethod } from './locked-method.js';

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
 * the clock); elsewhere it resolves `undefined` without running, so the method must be
 * async and declared to admit it (`Promise<T | undefined>`, `Promise<void>`): the
 * compiler refuses others. The application joins `group` at start-up. What holds:
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
export function WhenLeader(group: string, options?: WhenLeaderOptions): LeaderMethodDecorator {
  checkGroup(group);
  if (options !== undefined && typeof options === 'object' && options !== null)
    assertKnownOptions(options, ['onLockLost'], '@WhenLeader');
  const { onLockLost } = resolveLeaderWorkOptions(options);
  return (target, key, descriptor) => {
    wrapMethod(
      target,
      key,
      descriptor,
      { key: WHEN_LEADER_METADATA, value: group },
      (method) => new WhenLeaderUsageError(nestMessages.notAMethod('@WhenLeader', method)),
      (original, method) => {
        return async function (this: unknown, ...args: unknown[]): Promise<unknown> {
          const lockService = lockServiceRegistry.serviceFor(this, method, '@WhenLeader');
          const logger = loggerOf(lockService);
          const work = {
            onLockLost,
            onLost: (error: LockLostError, ignored: boolean) => logger.warn(lostLog(method, group, error, ignored)),
          };
          // After its application's shutdown began, an instance leads nothing.
          const run = leadershipRegistry
            .find(lockService)
            ?.runAsLeader(group, () => lockServiceRegistry.runFor(lockService, () => original.apply(this, args)), work);
          // Routine on every other instance.
          if (!run) logger.verbose(`Skipped ${method}: this instance does not lead group "${group}" (@WhenLeader).`);
          return run;
        };
      },
    );
  };
}

/**
 * What `@WhenLeader` accepts: an async method (a synchronous one would return a Promise
 * where its type says otherwise) whose declared type admits `undefined`, which it
 * resolves on every instance that does not lead. The compiler refuses others.
 */
export type LeaderMethodDecorator = <M extends AsyncMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M> &
    AdmitsUndefined<
      M,
      '@WhenLeader resolves undefined where this instance does not lead: declare Promise<T | undefined>'
    >,
) => void;

const lostLog = (method: string, group: string, error: LockLostError, ignored: boolean): string =>
  `The term of leadership of group "${group}" that ${method} started under ended while it still ran: ${error.why}. ` +
  (ignored
    ? `The call keeps its result (onLockLost: 'ignore').`
    : `The call will reject with LockLostError when it settles; read leadership.term("${group}")?.signal inside the method to stop early.`);

function checkGroup(group: unknown): void {
  if (typeof group !== 'string' || group === '')
    throw new WhenLeaderUsageError(nestMessages.needsName('@WhenLeader', group));
  try {
    leaderLockName(group);
  } catch (error) {
    if (!(error instanceof InvalidLeaderGroupError)) throw error;
    throw new WhenLeaderUsageError(nestMessages.badOption('@WhenLeader', error.message), { cause: error });
  }
}
