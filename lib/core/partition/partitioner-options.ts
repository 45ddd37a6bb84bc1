import { InvalidLockNameError, InvalidOptionError } from '../errors/errors.js';
import { partitionMessages } from '../errors/messages.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { encodeGroupName } from '../naming/group-name.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { partLockPrefix } from './part-owners.js';
import { MAX_TIMER_MS } from '../util/long-timeout.js';

/** The parts of a group: a count `n` (parts `0…n-1`), or a list of string keys. */
export type Partitions = number | readonly string[];

/** One part of `T`: a number for a count, a key for a list. */
export type PartOf<T extends Partitions> = T extends number ? number : T extends readonly (infer K)[] ? K : never;

/** Options of a `Partitioner`. */
export interface PartitionerOptions<T extends Partitions = Partitions> {
  /** The parts: a count (parts `0…n-1`) or a list of distinct string keys; up to `MAX_PARTITIONS`. The same in every member. */
  readonly partitions: T;
  /**
   * This instance's id in the group: a static id (like Kafka's `group.instance.id`), so a
   * restarted instance is the same member and, within `settleMs`, gets its parts back.
   * Default: the backend's identity (`host:pid:random`), a new member at every start.
   */
  readonly memberId?: string;
  /**
   * How long the members must stay the same before parts are moved for a change, in ms
   * (each change starts it again): a rolling restart within it moves nothing but the
   * restarted member's parts, which wait for it. Default 0: move at once.
   */
  readonly settleMs?: number;
  /** How long `onRevoked` may drain revoked parts before their locks are released anyway, in ms. Default 30000. */
  readonly revokeGraceMs?: number;
  /**
   * Called with parts this member gives up (sorted), after listeners were told `revoked`
   * and before their locks are released: finish or stop their work. `signal` aborts when
   * `revokeGraceMs` runs out; the locks are released then whatever it does.
   */
  readonly onRevoked?: (parts: PartOf<T>[], signal: AbortSignal) => unknown;
}

/** The most parts a group may have: each member watches every part's lock. */
export const MAX_PARTITIONS = 1024;
export const DEFAULT_REVOKE_GRACE_MS = 30_000;

const OPTION_KEYS: readonly string[] = ['partitions', 'memberId', 'settleMs', 'revokeGraceMs', 'onRevoked'];

/** A group's parts as checked: each part's key (its decimal number for a count), value and lock. */
export interface PartSet {
  /** Keys in part order (0…n-1, or the list's order). */
  readonly keys: readonly string[];
  /** What users see of each key: the number for a count, the key itself for a list. */
  readonly valueOf: (key: string) => number | string;
  /** The lock whose holder owns the part: `partition:<group>/<key>`. */
  readonly lockOf: (key: string) => string;
  /** The prefix every part lock's name starts with, and no other lock's. */
  readonly prefix: string;
  /** Sorts keys as `owned()` lists them: numerically for a count, by code units for keys. */
  readonly compare: (a: string, b: string) => number;
}

export interface ResolvedPartitionerOptions {
  readonly parts: PartSet;
  readonly memberId: string | undefined;
  readonly settleMs: number;
  readonly revokeGraceMs: number;
  readonly onRevoked: ((parts: Array<number | string>, signal: AbortSignal) => unknown) | undefined;
}

/** Checks every option, unknown keys included; throws `InvalidGroupError` / `InvalidOptionError` before anything is sent. */
export function resolvePartitionerOptions(group: string, options: unknown): ResolvedPartitionerOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InvalidOptionError('options', options, partitionMessages.optionsObject);
  assertKnownOptions(options, OPTION_KEYS, 'Partitioner');
  const {
    partitions,
    memberId,
    settleMs = 0,
    revokeGraceMs = DEFAULT_REVOKE_GRACE_MS,
    onRevoked,
  } = options as Partial<PartitionerOptions>;
  if (memberId !== undefined) encodeGroupName('memberId', memberId);
  checkMs('settleMs', settleMs);
  checkMs('revokeGraceMs', revokeGraceMs);
  if (onRevoked !== undefined && typeof onRevoked !== 'function')
    throw new InvalidOptionError('onRevoked', onRevoked, 'a function (parts, signal) => void or Promise<void>');
  return {
    parts: partSet(partLockPrefix(group), partitions),
    memberId,
    settleMs,
    revokeGraceMs,
    onRevoked: onRevoked as ResolvedPartitionerOptions['onRevoked'],
  };
}

function partSet(prefix: string, partitions: unknown): PartSet {
  const lockOf = (key: string): string => `${prefix}${key}`;
  if (typeof partitions === 'number') {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS)
      throw new InvalidOptionError('partitions', partitions, partitionMessages.partitions(MAX_PARTITIONS));
    return {
      keys: Array.from({ length: partitions }, (_, i) => String(i)),
      valueOf: Number,
      lockOf,
      prefix,
      compare: (a, b) => Number(a) - Number(b),
    };
  }
  if (!Array.isArray(partitions) || partitions.length < 1 || partitions.length > MAX_PARTITIONS)
    throw new InvalidOptionError('partitions', partitions, partitionMessages.partitions(MAX_PARTITIONS));
  const seen = new Set<string>();
  for (const key of partitions as unknown[]) {
    checkKey(key, lockOf);
    if (seen.has(key as string))
      throw new InvalidOptionError('partitions', partitions, partitionMessages.duplicateKey(key as string));
    seen.add(key as string);
  }
  return {
    keys: [...seen],
    valueOf: (key) => key,
    lockOf,
    prefix,
    compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  };
}

/** A key must make a valid lock name (`partition:<group>/<key>`). */
function checkKey(key: unknown, lockOf: (key: string) => string): void {
  const why = typeof key !== 'string' ? 'not a string' : key === '' ? 'it is empty' : lockNameProblem(lockOf(key));
  if (why !== undefined) throw new InvalidOptionError('partitions', key, partitionMessages.invalidKey(key, why));
}

function lockNameProblem(name: string): string | undefined {
  try {
    encodeLockName(name);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidLockNameError) return error.why;
    throw error;
  }
}

function checkMs(option: string, value: unknown): void {
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMER_MS))
    throw new InvalidOptionError(option, value, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`);
}
