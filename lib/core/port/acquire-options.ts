import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import type { AcquireOptions, ReadOptions } from './lock-backend.js';
import { LOCK_MODES, type LockMode } from './lock-mode.js';
import { nodeFormatFor, validateNodeFormat, type NodeFormat } from './node-format.js';

export interface ResolvedAcquireOptions {
  readonly mode: LockMode;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Present (and `true`) only for a revocable acquire: other calls resolve as before. */
  readonly revocable?: true;
  /** Present only when the call names its own format (the client's default applies otherwise). */
  readonly nodeFormat?: NodeFormat;
}

/** The options of `acquire` and `tryAcquire` (`reentrant` is read by `ReentrantLocker`). */
const ACQUIRE_OPTION_KEYS: readonly string[] = ['mode', 'timeoutMs', 'signal', 'revocable', 'nodeFormat', 'reentrant'];

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
  const resolved: ResolvedAcquireOptions = revocable
    ? { mode, timeoutMs, signal, revocable }
    : { mode, timeoutMs, signal };
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
 * wait for a connected session without a `timeoutMs` of their own: the Nest module's
 * default `acquireTimeoutMs` (the module passes its own).
 */
export const DEFAULT_READ_TIMEOUT_MS = 10_000;

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
