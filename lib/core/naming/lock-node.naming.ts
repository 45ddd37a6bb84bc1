import { randomUUID } from 'node:crypto';

import type { LockMode } from '../recipe/lock-mode.js';

/**
 * Lock node names use Kazoo's format, so that Python services using Kazoo's `Lock`,
 * `ReadLock` and `WriteLock` on the same path queue in the same line as we do:
 * `<32 hex guid>__lock__<seq>` (write) and `<32 hex guid>__rlock__<seq>` (read).
 */
export const WRITE_MARKER = '__lock__';
export const READ_MARKER = '__rlock__';

/**
 * The whole name, strictly: a 32-hex guid, the marker, and ZooKeeper's `%010d` rendering
 * of the sequence (ten digits; a wrapped, negative counter renders as `-` and nine or ten
 * digits). Anything else in the directory is not a lock node and never queues.
 */
const NODE_PATTERN = /^[0-9a-f]{32}(__lock__|__rlock__)(\d{10}|-\d{9,10})$/;

/**
 * ZooKeeper's sequence counter (the parent's stored `cversion`, a signed 32-bit int
 * raised by every child create) stops at 2^31 - 1: later children repeat that suffix or
 * wrap negative, and the queue order is lost. A node numbered from here on is never
 * granted: the directory is retired (drained, deleted and created anew, which restarts the
 * counter) about 16 million creates before the limit.
 */
export const RETIRE_SEQUENCE = 2 ** 31 - 2 ** 24;

export interface ParsedLockNode {
  /** The child's name as ZooKeeper lists it. */
  readonly node: string;
  readonly mode: LockMode;
  /** ZooKeeper's sequence suffix, compared as a number. */
  readonly sequence: number;
}

/** A fresh guid for one acquire attempt; it lets a lost create reply be recovered. */
export function newAttemptGuid(): string {
  // randomUUID draws from a cached entropy pool: much cheaper than randomBytes per call.
  return randomUUID().replace(/-/g, '');
}

/** The name passed to a sequential create; ZooKeeper appends the sequence number. */
export function lockNodePrefix(guid: string, mode: LockMode): string {
  return guid + (mode === 'write' ? WRITE_MARKER : READ_MARKER);
}

/** Parses a lock child, or returns `null` for a child that is not a lock node. */
export function parseLockNode(node: string): ParsedLockNode | null {
  const match = NODE_PATTERN.exec(node);
  if (!match) return null;
  return { node, mode: match[1] === WRITE_MARKER ? 'write' : 'read', sequence: Number(match[2]) };
}
