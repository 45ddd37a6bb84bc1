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

/**
 * Whether the holder of a lock node opted in to revocation (`revocable: true`), told by
 * the first eight hex digits of its guid, which our clients set: one tag for revocable, one
 * for not. Nothing on the wire says whether a holder watches its node for `__REVOKE__`, and
 * the node's data is its identity, which other clients show: the name is where a requester
 * can see it at no cost. Another client's random guid (Kazoo's, Curator's, an older
 * version's) carries either tag once in 2^31: such a node is `unknown`. The other 96 bits
 * stay random, enough to find a node after a lost create reply.
 */
const REVOCATION_TAGS = { revocable: 'ae0cab1e', 'not-revocable': '5e0cab1e' } as const;

/** What a lock node's name says of its holder's revocation opt-in. */
export type RevocationOptIn = keyof typeof REVOCATION_TAGS | 'unknown';

/** The name passed to a sequential create for a new attempt: a fresh guid and the marker; ZooKeeper appends the sequence. */
export function newLockNodePrefix(mode: LockMode, format: NodeFormat = DEFAULT_NODE_FORMAT, revocable = false): string {
  const tag = REVOCATION_TAGS[revocable ? 'revocable' : 'not-revocable'];
  // The tag replaces the guid's first eight hex digits (a uuid's first group).
  const uuid = tag + randomUUID().slice(8);
  if (format === 'kazoo') return lockNodePrefix(uuid.replace(/-/g, ''), mode);
  const marker =
    format === 'curator-mutex' ? CURATOR_MUTEX_MARKER : mode === 'write' ? CURATOR_WRITE_MARKER : CURATOR_READ_MARKER;
  return `${CURATOR_PROTECTION}${uuid}-${marker}`;
}

/** The opt-in a lock node's name carries (see `REVOCATION_TAGS`); `unknown` for another client's node. */
export function revocationOptInOf(node: string): RevocationOptIn {
  const tag = node.slice(node.startsWith(CURATOR_PROTECTION) ? CURATOR_PROTECTION.length : 0).slice(0, 8);
  if (tag === REVOCATION_TAGS.revocable) return 'revocable';
  return tag === REVOCATION_TAGS['not-revocable'] ? 'not-revocable' : 'unknown';
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
