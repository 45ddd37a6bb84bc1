import {
  type NodeFormat,
  type AcquireOptions,
  type ReadOptions,
  LOCK_MODES,
  type LockMode,
  type AcquireLeaseOptions,
  type LockList,
  type MultiAcquireOptions,
  type RecordData,
  type WriteRecordOptions,
  type LockHandle,
  type ReleaseMode,
  RELEASE_MODES,
} from './lock-backend.js';
import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { nodeFormatFor, validateNodeFormat } from './node-format.js';
import { leaseMessages, multiLockMessages as messages } from '../errors/messages.js';

/**
 * Checks a duration option given in whole milliseconds, from `min` to `max` (by default the
 * largest safe integer: every timer of the library waits that long, see `longTimeout`).
 * The error names the range, so a value past the limit says what the limit is.
 */
export function wholeMilliseconds(option: string, value: unknown, min: 0 | 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(option, value, `a whole number of milliseconds from ${min} to ${max}`);
  }
  return value;
}

export interface ResolvedAcquireOptions {
  readonly mode: LockMode;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Present (and `true`) only for a revocable acquire: other calls resolve as before. */
  readonly revocable?: true;
  /** Present only when the call names its own format (the client's default applies otherwise). */
  readonly nodeFormat?: NodeFormat;
  /** Present only when the call limits how long the grant may be held. */
  readonly maxHoldMs?: number;
  /** Present only when the call says when its release resolves (the client's default applies otherwise). */
  readonly release?: ReleaseMode;
}

/** The options of `acquire` and `tryAcquire` (`reentrant` is read by `ReentrantLocker`). */
const ACQUIRE_OPTION_KEYS: readonly string[] = [
  'mode',
  'timeoutMs',
  'signal',
  'revocable',
  'nodeFormat',
  'maxHoldMs',
  'release',
  'reentrant',
];

/** `maxHoldMs`, checked: `undefined` (no limit) or a whole number of milliseconds >= 1. */
export function resolveMaxHoldMs(value: unknown): number | undefined {
  return value === undefined ? undefined : wholeMilliseconds('maxHoldMs', value, 1);
}

/** `{ maxHoldMs }` when set, else nothing: options without it resolve as before. */
function maxHoldOf(value: unknown): { maxHoldMs?: number } {
  const maxHoldMs = resolveMaxHoldMs(value);
  return maxHoldMs === undefined ? {} : { maxHoldMs };
}

/** `release` (a call's, or a client's default), checked: `undefined` or a `ReleaseMode`. */
export function resolveReleaseMode(value: unknown): ReleaseMode | undefined {
  if (value === undefined || RELEASE_MODES.includes(value as ReleaseMode)) return value as ReleaseMode | undefined;
  throw new InvalidOptionError('release', value, '"sent" or "confirmed"');
}

/** `{ release }` when set, else nothing: options without it resolve as before. */
function releaseOf(value: unknown): { release?: ReleaseMode } {
  const release = resolveReleaseMode(value);
  return release === undefined ? {} : { release };
}

/**
 * Checks per-call options, unknown keys included, before anything is sent to ZooKeeper.
 * `owner` and `also`: the call that takes them and its own further options (`withLock`'s).
 */
export function resolveAcquireOptions(
  options: AcquireOptions | undefined,
  defaultTimeoutMs: number,
  owner = 'acquire/tryAcquire',
  also: readonly string[] = [],
): ResolvedAcquireOptions {
  if (options === undefined) return { mode: 'write', timeoutMs: defaultTimeoutMs, signal: undefined };
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', options, 'an object such as { mode: "read", timeoutMs: 5000 }');
  }
  assertKnownOptions(options, [...ACQUIRE_OPTION_KEYS, ...also], owner);
  const { mode = 'write', timeoutMs = defaultTimeoutMs, signal, revocable = false } = options;
  const nodeFormat = validateNodeFormat('nodeFormat', options.nodeFormat);
  if (!LOCK_MODES.includes(mode)) throw new InvalidOptionError('mode', mode, '"read" or "write"');
  checkTimeoutMs(timeoutMs);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidOptionError('signal', signal, 'an AbortSignal');
  }
  if (typeof revocable !== 'boolean') throw new InvalidOptionError('revocable', revocable, 'true or false');
  if (nodeFormat) nodeFormatFor(mode, nodeFormat, nodeFormat); // a reader in "curator-mutex" is refused here already
  const maxHold = { ...maxHoldOf(options.maxHoldMs), ...releaseOf(options.release) };
  const resolved: ResolvedAcquireOptions = revocable
    ? { mode, timeoutMs, signal, revocable, ...maxHold }
    : { mode, timeoutMs, signal, ...maxHold };
  return nodeFormat ? { ...resolved, nodeFormat } : resolved;
}

/** Throws `InvalidOptionError` unless `timeoutMs` is a number of milliseconds >= 0 (`Infinity` included). */
export function checkTimeoutMs(timeoutMs: unknown): asserts timeoutMs is number {
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    throw new InvalidOptionError(
      'timeoutMs',
      timeoutMs,
      'a number of milliseconds >= 0 (0 = do not wait, Infinity = wait forever)',
    );
  }
}

/**
 * How long the reads (`contenders`, `locks`, `leaseContenders`) and `requestRevocation`
 * wait for a connected session without a `timeoutMs` of their own (the Nest module
 * passes its `acquireTimeoutMs`).
 */
const DEFAULT_READ_TIMEOUT_MS = 10_000;

/** Checks the options of a read or `requestRevocation` (`owner`: its name, for an unknown key); resolves its `timeoutMs`. */
export function resolveReadTimeout(options: ReadOptions | undefined, owner: string): number {
  if (options === undefined) return DEFAULT_READ_TIMEOUT_MS;
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', options, 'an object such as { timeoutMs: 5000 }');
  }
  assertKnownOptions(options, ['timeoutMs'], owner);
  const { timeoutMs = DEFAULT_READ_TIMEOUT_MS } = options;
  checkTimeoutMs(timeoutMs);
  return timeoutMs;
}

/** `locks()`'s `prefix`: any string (`''`, the default, lists every lock). */
export function resolveListingPrefix(prefix: unknown): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string') {
    throw new InvalidOptionError(
      'prefix',
      prefix,
      'a string that the names of the locks to list start with (or nothing, for every lock)',
    );
  }
  return prefix;
}

/**
 * The largest `maxLeases`. Every acquire, and every waiter's wake-up, reads the whole
 * directory listing: a full semaphore of 1000 holds about 55 KB of node names, well under
 * ZooKeeper's 1 MB packet limit (`jute.maxbuffer`) with room for about 18,000 waiters.
 * Past that the listing, not the number of requests, is the cost of each grant.
 */
export const MAX_LEASES = 1000;

const LEASE_OPTION_KEYS: readonly string[] = ['maxLeases', 'timeoutMs', 'signal', 'maxHoldMs', 'release'];

export interface ResolvedLeaseOptions {
  readonly maxLeases: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly maxHoldMs?: number;
  readonly release?: ReleaseMode;
}

/** Checks `acquireLease`'s options, unknown keys included, before anything is sent to ZooKeeper. */
export function resolveLeaseOptions(
  options: AcquireLeaseOptions | undefined,
  defaultTimeoutMs: number,
): ResolvedLeaseOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, leaseMessages.optionsObject);
  assertKnownOptions(options, LEASE_OPTION_KEYS, 'acquireLease/withLease/@WithLease');
  const { maxLeases } = options;
  if (typeof maxLeases !== 'number' || !Number.isInteger(maxLeases) || maxLeases < 1 || maxLeases > MAX_LEASES) {
    throw new InvalidOptionError('maxLeases', maxLeases, leaseMessages.maxLeases(MAX_LEASES));
  }
  // The wait's options mean what they mean for locks: checked by the same rules.
  const { timeoutMs, signal } = resolveAcquireOptions(
    { timeoutMs: options.timeoutMs, signal: options.signal },
    defaultTimeoutMs,
  );
  return { maxLeases, timeoutMs, signal, ...maxHoldOf(options.maxHoldMs), ...releaseOf(options.release) };
}

export interface ResolvedMultiAcquireOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly nodeFormat?: NodeFormat;
  /** Present only when the call limits how long the group may be held. */
  readonly maxHoldMs?: number;
  readonly release?: ReleaseMode;
}

/** The most locks one call may take: each costs a node and a request, all sent at once. */
export const MAX_LOCKS_PER_CALL = 1000;

const MULTI_OPTION_KEYS: readonly string[] = ['timeoutMs', 'signal', 'reentrant', 'nodeFormat', 'maxHoldMs', 'release'];

/** Checks the options, unknown keys included (a `mode` here is a common slip), before anything is sent. */
export function resolveMultiAcquireOptions(
  options: MultiAcquireOptions | undefined,
  defaultTimeoutMs: number,
): ResolvedMultiAcquireOptions {
  if (options === undefined) return { timeoutMs: defaultTimeoutMs, signal: undefined };
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, messages.optionsObject);
  assertKnownOptions(options, MULTI_OPTION_KEYS, 'acquireAll/withLocks', (key) =>
    key === 'mode' ? messages.modeOnGroup : undefined,
  );
  const { timeoutMs, signal } = resolveAcquireOptions(
    { timeoutMs: options.timeoutMs, signal: options.signal },
    defaultTimeoutMs,
  );
  const nodeFormat = validateNodeFormat('nodeFormat', options.nodeFormat);
  const resolved = { timeoutMs, signal, ...maxHoldOf(options.maxHoldMs), ...releaseOf(options.release) };
  return nodeFormat ? { ...resolved, nodeFormat } : resolved;
}

/** The names of a lock list, for messages and events (the list is checked later, by the call). */
export function describeList(locks: LockList): string {
  if (!Array.isArray(locks)) return String(locks);
  return locks
    .map((entry) => (typeof entry === 'string' ? entry : String((entry as { name?: unknown })?.name)))
    .join(', ');
}

/** The modes of a lock list, for events: `write` or `read` when all agree, else `mixed`. */
export function describeModes(locks: LockList): 'read' | 'write' | 'mixed' {
  if (!Array.isArray(locks)) return 'mixed';
  const modes = new Set(
    locks.map((entry) => (typeof entry === 'string' ? 'write' : ((entry as { mode?: unknown })?.mode ?? 'write'))),
  );
  return modes.size === 1 && (modes.has('read') || modes.has('write')) ? ([...modes][0] as 'read' | 'write') : 'mixed';
}

/** The largest record `writeRecord` takes, as UTF-8 JSON: a record says what happened, it is not a store. */
export const MAX_RECORD_BYTES = 16 * 1024;

export interface ResolvedWriteRecord {
  /** The record as it is stored. */
  readonly json: string;
  readonly expectedVersion: number | null | undefined;
  /** Checked by the backend: only its own handles can be held while writing. */
  readonly whileHolding: LockHandle | undefined;
  readonly timeoutMs: number;
}

/** Checks `writeRecord`'s data and options before anything is written. */
export function resolveWriteRecord(data: RecordData, options: WriteRecordOptions | undefined): ResolvedWriteRecord {
  const { expectedVersion, whileHolding, ...read } = options ?? {};
  const timeoutMs = resolveReadTimeout(options === undefined ? undefined : read, 'writeRecord');
  if (
    expectedVersion !== undefined &&
    expectedVersion !== null &&
    !(Number.isSafeInteger(expectedVersion) && expectedVersion >= 0)
  ) {
    throw new InvalidOptionError(
      'expectedVersion',
      expectedVersion,
      'a version read with readRecord, or null for "only if there is none"',
    );
  }
  const json = data !== null && typeof data === 'object' && !Array.isArray(data) ? JSON.stringify(data) : undefined;
  if (json === undefined || Buffer.byteLength(json, 'utf8') > MAX_RECORD_BYTES) {
    throw new InvalidOptionError('data', data, `a plain JSON object of at most ${MAX_RECORD_BYTES} bytes`);
  }
  return { json, expectedVersion, whileHolding, timeoutMs };
}
