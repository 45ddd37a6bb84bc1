import type { LockLostError } from '../../core/errors/errors.js';

/** What the leadership glue tells users, written once. */
export const leadershipMessages = {
  needsGroup: (group: unknown): string =>
    `@WhenLeader needs a leader group: a non-empty string such as "nightly-report", not ${typeof group === 'string' ? 'an empty string' : typeof group}.`,
  badGroup: (why: string): string => `@WhenLeader: ${why}`,
  notAMethod: (method: string): string =>
    `@WhenLeader can only decorate a method, and ${method} is not one (a property, getter or setter). Put it on a method.`,
  skipped: (method: string, group: string): string =>
    `Skipped ${method}: this instance does not lead group "${group}" (@WhenLeader).`,
  lost: (method: string, group: string, error: LockLostError, ignored: boolean): string =>
    `The term of leadership of group "${group}" that ${method} started under ended while it still ran: ${error.why}. ` +
    (ignored
      ? `The call keeps its result (onLockLost: 'ignore').`
      : `The call will reject with LockLostError when it settles; read leadership.term("${group}")?.signal inside the method to stop early.`),
} as const;
