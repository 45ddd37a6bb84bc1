import { randomUUID } from 'node:crypto';

import { InvalidOptionError } from '../errors/errors.js';
import type { LockMode, NodeFormat } from './lock-backend.js';

export const NODE_FORMATS: readonly NodeFormat[] = ['kazoo', 'curator-mutex', 'curator-rw'];

export const DEFAULT_NODE_FORMAT: NodeFormat = 'kazoo';

/** Kazoo's markers (`kazoo/recipe/lock.py`). */
export const WRITE_MARKER = '__lock__';
export const READ_MARKER = '__rlock__';
/** Curator's: the mutex's lock name, and the read/write lock's two (same length on purpose). */
export const CURATOR_MUTEX_MARKER = 'lock-';
export const CURATOR_WRITE_MARKER = '__WRIT__';
export const CURATOR_READ_MARKER = '__READ__';
/** Curator's "protection" prefix, which finds a node after a lost create reply, as our guid does. */
export const CURATOR_PROTECTION = '_c_';

const EXPECTED = NODE_FORMATS.map((format) => `"${format}"`).join(', ');

/** Checks a `nodeFormat` option's value; `undefined` stays (the default applies later). */
export function validateNodeFormat(option: string, value: unknown): NodeFormat | undefined {
  if (value === undefined || NODE_FORMATS.includes(value as NodeFormat)) return value as NodeFormat | undefined;
  throw new InvalidOptionError(option, value, `one of ${EXPECTED}`);
}

/**
 * The format a call writes in: its own, else the client's default. Refuses a reader in
 * `curator-mutex`, which has no shared mode, before anything is sent.
 */
export function nodeFormatFor(
  mode: LockMode,
  callFormat: NodeFormat | undefined,
  defaultFormat: NodeFormat,
): NodeFormat {
  const format = callFormat ?? defaultFormat;
  if (format === 'curator-mutex' && mode === 'read') {
    throw new InvalidOptionError(
      callFormat ? 'nodeFormat' : 'mode',
      callFormat ? format : mode,
      `a write lock: "curator-mutex" names nodes for Curator's InterProcessMutex, which is exclusive. For a read lock shared with Curator use nodeFormat "curator-rw" (InterProcessReadWriteLock)`,
    );
  }
  return format;
}

/** The name passed to a sequential create for a new attempt: a fresh guid and the marker; ZooKeeper appends the sequence. */
export function newLockNodePrefix(mode: LockMode, format: NodeFormat = DEFAULT_NODE_FORMAT): string {
  if (format === 'kazoo') return lockNodePrefix(newAttemptGuid(), mode);
  const marker =
    format === 'curator-mutex' ? CURATOR_MUTEX_MARKER : mode === 'write' ? CURATOR_WRITE_MARKER : CURATOR_READ_MARKER;
  return `${CURATOR_PROTECTION}${randomUUID()}-${marker}`;
}

/** A fresh 32-hex guid for one acquire attempt; it lets a lost create reply be recovered. */
export function newAttemptGuid(): string {
  // randomUUID draws from a cached entropy pool: much cheaper than randomBytes per call.
  return randomUUID().replace(/-/g, '');
}

/** Kazoo's node prefix for `guid`. */
export function lockNodePrefix(guid: string, mode: LockMode): string {
  return guid + (mode === 'write' ? WRITE_MARKER : READ_MARKER);
}
