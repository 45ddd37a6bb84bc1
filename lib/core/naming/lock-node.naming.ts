import type { LockMode } from '../recipe/lock-mode.js';
import {
  CURATOR_MUTEX_MARKER,
  CURATOR_READ_MARKER,
  CURATOR_WRITE_MARKER,
  READ_MARKER,
  WRITE_MARKER,
  type NodeFormat,
} from './node-format.js';

export { lockNodePrefix, newAttemptGuid, READ_MARKER, WRITE_MARKER } from './node-format.js';

/**
 * The whole name, strictly, in one of the three formats this client reads (see
 * `NodeFormat`): a guid, a marker, and ZooKeeper's `%010d` rendering of the sequence (ten
 * digits; a wrapped, negative counter renders as `-` and nine or ten digits). Every
 * format's sequence comes from the directory's one counter, so they order together.
 * Anything else in the directory is not a lock node and never queues.
 */
const SEQUENCE = String.raw`(\d{10}|-\d{9,10})`;
const KAZOO_PATTERN = new RegExp(String.raw`^[0-9a-f]{32}(__lock__|__rlock__)` + SEQUENCE + '$');
const CURATOR_PATTERN = new RegExp(
  String.raw`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-(lock-|__WRIT__|__READ__)` +
    SEQUENCE +
    '$',
);

const KINDS: Readonly<Record<string, { mode: LockMode; format: NodeFormat }>> = {
  [WRITE_MARKER]: { mode: 'write', format: 'kazoo' },
  [READ_MARKER]: { mode: 'read', format: 'kazoo' },
  [CURATOR_MUTEX_MARKER]: { mode: 'write', format: 'curator-mutex' },
  [CURATOR_WRITE_MARKER]: { mode: 'write', format: 'curator-rw' },
  [CURATOR_READ_MARKER]: { mode: 'read', format: 'curator-rw' },
};

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
  /** Which client family's names it has (see `NodeFormat`). */
  readonly format: NodeFormat;
}

/** Parses a lock child of any format, or returns `null` for a child that is not a lock node. */
export function parseLockNode(node: string): ParsedLockNode | null {
  const match = KAZOO_PATTERN.exec(node) ?? CURATOR_PATTERN.exec(node);
  if (!match) return null;
  const { mode, format } = KINDS[match[1]];
  return { node, mode, sequence: Number(match[2]), format };
}
