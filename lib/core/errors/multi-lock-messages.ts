/**
 * Every message about taking several locks at once is written once, here, in the style of
 * `../errors/lock.messages.ts`: what happened, and what to do about it.
 */
const show = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
};

export const multiLockMessages = {
  invalidList: (why: string, limit: number): string =>
    `Invalid list of locks: ${why}. Pass 1 to ${limit} locks, each a name or { name, mode }, e.g. ["orders/42", { name: "stock", mode: "read" }].`,
  notAnArray: (value: unknown): string => `expected an array, got ${show(value)}`,
  empty: 'it is empty, so there is nothing to lock',
  tooMany: (count: number, limit: number): string =>
    `it has ${count} entries, over the limit of ${limit} per call; lock a coarser name, or split the work`,
  badEntry: (index: number, value: unknown): string =>
    `entry ${index} is ${show(value)}, neither a lock name nor an object { name, mode }`,
  unknownEntryKey: (index: number, key: string): string =>
    `entry ${index} has the key ${JSON.stringify(key)}; an entry takes only "name" and "mode" (check the spelling)`,
  optionsObject: 'an object such as { timeoutMs: 5000, signal } (or nothing)',
  modeOnGroup:
    'no "mode" here: give each lock its mode in the list instead, e.g. [{ name: "stock", mode: "read" }, "orders/42"]',
} as const;
