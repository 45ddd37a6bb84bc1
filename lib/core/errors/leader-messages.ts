/**
 * Every message about leader election is written once, here: what happened, to which
 * group, and what to do about it.
 */
const show = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : `a value of type ${typeof value}`;

export const leaderMessages = {
  invalidGroup: (group: unknown, why: string): string =>
    `Invalid leader group ${show(group)}: ${why}. Pass a non-empty, well-formed string such as "nightly-report".`,
  steppedDown: (group: string): string =>
    `this instance stepped down from leading group "${group}" (its election was stopped, e.g. at application shutdown)`,
  listenerThrew: (group: string, error: unknown): string =>
    `A leadership listener of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); the election goes on. Catch errors inside the listener.`,
} as const;
