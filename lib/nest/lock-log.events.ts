import { Logger } from '@nestjs/common';

import type { LockerEvents } from '../core/context/locker.events.js';

const logger = new Logger('ZkLock');

const SKIPPED = {
  held: 'another holder has it',
  timeout: 'it was not free within timeoutMs',
  closing: 'the application is shutting down',
} as const;

/** What `LockService` reports through Nest's `Logger` (context `ZkLock`). */
export const lockLogEvents: LockerEvents = {
  skipped: ({ name, mode, reason }) =>
    logger.verbose(`Skipped a call under lock "${name}" (${mode}, ifLocked: 'skip'): ${SKIPPED[reason]}.`),
  lost: ({ name, heldMs, error, ignored }) =>
    logger.warn(
      `Lock "${name}" was lost ${heldMs} ms after it was granted, while the locked call still ran: ${error.why}. ` +
        (ignored
          ? `The call keeps its result (onLockLost: 'ignore').`
          : `The call will reject with LockLostError when it settles; read the handle's signal (locks.held("${name}")?.signal) to stop early.`),
    ),
};
