/**
 * Lease nodes are named in this library's style, beside Kazoo's lock nodes:
 * `<32 hex guid>__lease__<seq>`, EPHEMERAL_SEQUENTIAL, data = the client's identity. The
 * guid is fresh for each attempt, so a create whose reply was lost is found again by it;
 * the sequence (ZooKeeper's `%010d`) is the place in the queue.
 */
export const LEASE_MARKER = '__lease__';

const LEASE_NODE = /^[0-9a-f]{32}__lease__(\d{10}|-\d{9,10})$/;

/** Kazoo's `Semaphore` names its lease nodes with a bare `uuid4().hex`, unsequenced. */
const KAZOO_LEASE_NODE = /^[0-9a-f]{32}$/;

export interface ParsedLeaseNode {
  /** The child's name as ZooKeeper lists it. */
  readonly node: string;
  /** ZooKeeper's sequence suffix, compared as a number. */
  readonly sequence: number;
}

/** The name passed to the sequential create; ZooKeeper appends the sequence number. */
export function leaseNodePrefix(guid: string): string {
  return guid + LEASE_MARKER;
}

/** Parses a lease child, or returns `null` for a child that is not a lease node. */
export function parseLeaseNode(node: string): ParsedLeaseNode | null {
  const match = LEASE_NODE.exec(node);
  return match ? { node, sequence: Number(match[1]) } : null;
}

/** Whether a child looks like a lease node of Kazoo's `Semaphore`. */
export function isKazooLeaseNode(node: string): boolean {
  return KAZOO_LEASE_NODE.test(node);
}
