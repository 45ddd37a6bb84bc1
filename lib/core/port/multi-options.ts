import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { resolveReentrant, type ReentrancyOption } from '../reentrancy/reentrancy-option.js';
import { resolveAcquireOptions } from './acquire-options.js';
import { validateNodeFormat, type NodeFormat } from './node-format.js';
import type { LockMode } from './lock-mode.js';
import { multiLockMessages as messages } from '../errors/messages.js';

/** One lock of a multi-lock: a name (taken for `write`), or a name and its mode. */
export type LockListEntry = string | { readonly name: string; readonly mode?: LockMode };

/** The locks `acquireAll` and `withLocks` take together, in any order; duplicates merge (`write` wins). */
export type LockList = readonly LockListEntry[];

/**
 * Per-call options of `acquireAll` and `withLocks`: one deadline for the whole call.
 * `reentrant` is read by `ReentrantLocker` only (a backend always takes nodes of its own).
 */
export interface MultiAcquireOptions extends ReentrancyOption {
  /**
   * How long to wait for all the locks together, in milliseconds: `0` tries once without
   * waiting, `Infinity` waits as long as it takes. Default: `Infinity` on a backend, the
   * locker's default timeout on `ReentrantLocker`.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the call rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
  /** How every node of the call is named (see `AcquireOptions.nodeFormat`). Default: the client's. */
  readonly nodeFormat?: NodeFormat;
}

export interface ResolvedMultiAcquireOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly nodeFormat?: NodeFormat;
}

/** The most locks one call may take: each costs a node and a request, all sent at once. */
export const MAX_LOCKS_PER_CALL = 1000;

const KNOWN_OPTIONS: readonly string[] = ['timeoutMs', 'signal', 'reentrant', 'nodeFormat'];

/** Checks the options, unknown keys included (a `mode` here is a common slip), before anything is sent. */
export function resolveMultiAcquireOptions(
  options: MultiAcquireOptions | undefined,
  defaultTimeoutMs: number,
): ResolvedMultiAcquireOptions {
  if (options === undefined) return { timeoutMs: defaultTimeoutMs, signal: undefined };
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, messages.optionsObject);
  assertKnownOptions(options, KNOWN_OPTIONS, 'acquireAll/withLocks', (key) =>
    key === 'mode' ? messages.modeOnGroup : undefined,
  );
  const { timeoutMs, signal } = resolveAcquireOptions(
    { timeoutMs: options.timeoutMs, signal: options.signal },
    defaultTimeoutMs,
  );
  resolveReentrant(options);
  const nodeFormat = validateNodeFormat('nodeFormat', options.nodeFormat);
  return nodeFormat ? { timeoutMs, signal, nodeFormat } : { timeoutMs, signal };
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
