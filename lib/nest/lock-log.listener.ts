import type { LockerEvents } from '../core/reentrancy/lock-call-policy.js';
import { lockMessages } from '../core/errors/messages.js';
import type { ZkLockLogger } from './lock-logger.js';

const SKIPPED = {
  held: 'another holder has it',
  'own-hold': "held by this instance's own hold (the holdAtLeastMs of its last run here)",
  timeout: 'it was not free within timeoutMs',
  closing: 'the application is shutting down',
  unavailable: 'no ZooKeeper session is connected',
} as const;

/**
 * What a `LockService` reports through Nest's `Logger` (context `ZkLock`). A skip for want
 * of a connected session is a warning, once per outage (a per-second job would otherwise
 * repeat it every second); every skip is a verbose line.
 */
export function lockLogEvents(logger: ZkLockLogger): LockerEvents {
  let warnedOutage: number | undefined;
  return {
    skipped: ({ name, mode, reason, error }) => {
      if (error && error.unavailableSince !== warnedOutage) {
        warnedOutage = error.unavailableSince;
        logger.warn(
          `Skipping calls with ifLocked: 'skip' while no ZooKeeper session is connected (first: lock "${name}", ${lockMessages.outage(error.state, error.unavailableForMs, error.neverConnected)}); said once per outage.`,
        );
      }
      logger.verbose(`Skipped a call under lock "${name}" (${mode}, ifLocked: 'skip'): ${SKIPPED[reason]}.`);
    },
    lost: ({ name, heldMs, error, ignored }) =>
      logger.warn(
        `Lock "${name}" was lost ${heldMs} ms after it was granted, while the locked call still ran: ${error.why}. ` +
          (ignored
            ? `The call keeps its result (onLockLost: 'ignore').`
            : `The call will reject with LockLostError when it settles; read the handle's signal (locks.held("${name}")?.signal) to stop early.`),
      ),
  };
}
