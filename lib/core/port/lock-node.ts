import type { NodeFormat, LockMode } from './lock-backend.js';
import {
  CURATOR_MUTEX_MARKER,
  CURATOR_READ_MARKER,
  CURATOR_WRITE_MARKER,
  READ_MARKER,
  WRITE_MARKER,
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

/**
 * A lock node's data once its holder is asked to release (Curator's `Revoker` writes these
 * ten ASCII bytes): `contenders()` shows it as the holder's identity on both backends.
 */
export const REVOKE_REQUEST = '__REVOKE__';

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
  const fast = parseCommonShape(node);
  if (fast) return fast;
  const match = KAZOO_PATTERN.exec(node) ?? CURATOR_PATTERN.exec(node);
  if (!match) return null;
  const { mode, format } = KINDS[match[1]];
  return { node, mode, sequence: Number(match[2]), format };
}

/**
 * Every listing is parsed child by child on each read of a queue, so the shape nearly all
 * children have (a known guid, a marker, ten digits) is checked by character codes, without
 * the patterns' match arrays and substrings. Anything else (a negative sequence, a stranger)
 * is left to the patterns, which stay the definition; a test holds the two to one answer.
 */
function parseCommonShape(node: string): ParsedLockNode | null {
  const kazoo = node.length === 50 || node.length === 51;
  const markerAt = kazoo ? 32 : 40;
  const marker = markerFor(node, markerAt);
  if (!marker || node.length !== markerAt + marker.length + 10) return null;
  if (kazoo ? !isHexRun(node, 0, 32) : !isCuratorGuid(node)) return null;
  const sequence = tenDigits(node, node.length - 10);
  if (sequence < 0) return null;
  const { mode, format } = KINDS[marker];
  return { node, mode, sequence, format };
}

const CURATOR_MARKERS = [CURATOR_MUTEX_MARKER, CURATOR_WRITE_MARKER, CURATOR_READ_MARKER];
/** Where Curator's protected names have a `-`: inside the uuid and after it. */
const CURATOR_DASHES = [11, 16, 21, 26, 39];

function markerFor(node: string, at: number): string | undefined {
  if (at === 32)
    return node.startsWith(WRITE_MARKER, at)
      ? WRITE_MARKER
      : node.startsWith(READ_MARKER, at)
        ? READ_MARKER
        : undefined;
  return CURATOR_MARKERS.find((marker) => node.startsWith(marker, at));
}

/** `_c_` + a lower-case 8-4-4-4-12 uuid + `-`: the 40 characters before a Curator marker. */
function isCuratorGuid(node: string): boolean {
  if (!node.startsWith('_c_')) return false;
  if (CURATOR_DASHES.some((at) => node.charCodeAt(at) !== 45)) return false;
  return (
    isHexRun(node, 3, 8) &&
    isHexRun(node, 12, 4) &&
    isHexRun(node, 17, 4) &&
    isHexRun(node, 22, 4) &&
    isHexRun(node, 27, 12)
  );
}

function isHexRun(text: string, from: number, length: number): boolean {
  for (let i = from; i < from + length; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** The ten decimal digits at `from` as a number, or -1. */
function tenDigits(text: string, from: number): number {
  let value = 0;
  for (let i = from; i < from + 10; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}
