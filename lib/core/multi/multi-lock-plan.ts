import { InvalidOptionError, InvalidLockListError } from '../errors/errors.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { LOCK_MODES, type LockMode } from '../port/lock-backend.js';
import { multiLockMessages as messages } from '../errors/messages.js';
import { MAX_LOCKS_PER_CALL } from '../port/options.js';

/** One lock a multi-lock takes. */
export interface PlannedLock {
  readonly name: string;
  readonly mode: LockMode;
  /** The encoded name (`encodeLockName`): its place in the canonical order. */
  readonly key: string;
}

const ENTRY_KEYS: readonly string[] = ['name', 'mode'];

/**
 * The pure part of the multi-lock: checks the list, merges duplicates (`write` wins: it
 * covers `read`), and puts the locks in the one order every client takes them in. The
 * order is the encoded names' (plain ASCII, compared by code unit), so it is the same in
 * every process and every backend, whatever order callers list the names in.
 */
export function planLocks(locks: unknown): PlannedLock[] {
  if (!Array.isArray(locks)) throw new InvalidLockListError(messages.notAnArray(locks), MAX_LOCKS_PER_CALL);
  if (locks.length === 0) throw new InvalidLockListError(messages.empty, MAX_LOCKS_PER_CALL);
  if (locks.length > MAX_LOCKS_PER_CALL)
    throw new InvalidLockListError(messages.tooMany(locks.length, MAX_LOCKS_PER_CALL), MAX_LOCKS_PER_CALL);
  const byKey = new Map<string, PlannedLock>();
  for (let index = 0; index < locks.length; index++) {
    const { name, mode } = entryOf(locks[index], index);
    const key = encodeLockName(name);
    const seen = byKey.get(key);
    if (!seen || (seen.mode === 'read' && mode === 'write')) byKey.set(key, { name, mode, key });
  }
  return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
}

/** The canonical order: encoded names by code unit (they are ASCII, so by byte too). */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** A call chain's locks that a multi-lock may not wait behind: see `lockOrderConflict`. */
export interface LockOrderConflict {
  /** The locks held that do not sort before every name still to take, in the canonical order. */
  readonly held: readonly string[];
  /** The names still to take that do not sort after every lock held, in the canonical order. */
  readonly missing: readonly string[];
}

/**
 * Whether a call chain holding `held` (every lock it holds through the backend, listed or
 * not) may take `missing` (the names of a plan it does not hold) as a multi-lock. A
 * multi-lock never deadlocks because every client waits for names in the canonical order:
 * it waits for one only while holding none that comes after it. Locks the chain already
 * holds are held during every wait, so that holds only if every name still to take sorts
 * after every lock held; otherwise the chain could wait for a name held by a client that
 * waits, in order, for a lock the chain holds. Nothing missing: nothing to wait for.
 */
export function lockOrderConflict(
  held: readonly string[],
  missing: readonly PlannedLock[],
): LockOrderConflict | undefined {
  if (missing.length === 0 || held.length === 0) return undefined;
  const heldKeys = held.map((name) => ({ name, key: encodeLockName(name) })).sort((a, b) => compareKeys(a.key, b.key));
  const firstMissing = missing.reduce((first, lock) => (compareKeys(lock.key, first.key) < 0 ? lock : first));
  const lastHeld = heldKeys[heldKeys.length - 1];
  if (compareKeys(lastHeld.key, firstMissing.key) < 0) return undefined;
  return {
    held: heldKeys.filter(({ key }) => compareKeys(key, firstMissing.key) >= 0).map(({ name }) => name),
    missing: [...missing]
      .sort((a, b) => compareKeys(a.key, b.key))
      .filter(({ key }) => compareKeys(key, lastHeld.key) <= 0)
      .map(({ name }) => name),
  };
}

function entryOf(entry: unknown, index: number): { name: string; mode: LockMode } {
  if (typeof entry === 'string') return { name: entry, mode: 'write' };
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new InvalidLockListError(messages.badEntry(index, entry), MAX_LOCKS_PER_CALL);
  for (const key of Object.keys(entry)) {
    if (!ENTRY_KEYS.includes(key))
      throw new InvalidLockListError(messages.unknownEntryKey(index, key), MAX_LOCKS_PER_CALL);
  }
  const { name, mode = 'write' } = entry as { name: string; mode?: LockMode };
  if (!LOCK_MODES.includes(mode)) throw new InvalidOptionError(`locks[${index}].mode`, mode, '"read" or "write"');
  return { name, mode };
}
