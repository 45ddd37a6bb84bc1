import { InvalidOptionError } from '../errors/invalid-option.error.js';
import { encodeLockName } from '../naming/lock-name.codec.js';
import { LOCK_MODES, type LockMode } from '../recipe/lock-mode.js';
import { InvalidLockListError } from './invalid-lock-list.error.js';
import { multiLockMessages as messages } from './multi-lock.messages.js';
import { MAX_LOCKS_PER_CALL } from './multi-lock.options.js';

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
  if (!Array.isArray(locks)) throw new InvalidLockListError(messages.notAnArray(locks));
  if (locks.length === 0) throw new InvalidLockListError(messages.empty);
  if (locks.length > MAX_LOCKS_PER_CALL)
    throw new InvalidLockListError(messages.tooMany(locks.length, MAX_LOCKS_PER_CALL));
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

function entryOf(entry: unknown, index: number): { name: string; mode: LockMode } {
  if (typeof entry === 'string') return { name: entry, mode: 'write' };
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new InvalidLockListError(messages.badEntry(index, entry));
  for (const key of Object.keys(entry)) {
    if (!ENTRY_KEYS.includes(key)) throw new InvalidLockListError(messages.unknownEntryKey(index, key));
  }
  const { name, mode = 'write' } = entry as { name: string; mode?: LockMode };
  if (!LOCK_MODES.includes(mode)) throw new InvalidOptionError(`locks[${index}].mode`, mode, '"read" or "write"');
  return { name, mode };
}
