import { parseLeaseNode, type ParsedLeaseNode } from './lease-node.js';
import { inQueueOrder, placeIn } from './lock-queue.js';

/**
 * The pure part of the lease recipe: given a semaphore directory's children, who holds,
 * who waits, and what each waiter watches. Free of I/O so it can be tested exhaustively.
 *
 * The `maxLeases` lowest-numbered lease nodes hold. The first waiter (the *head*, at index
 * `maxLeases`) watches the directory's children: any holder leaving, in any order, fires
 * it (so does an arrival: one read, which sets its next watch). Every other waiter watches the node just ahead of it, which cannot hold before that
 * node holds or leaves; a waiter that comes to hold with nodes queued behind it writes its
 * own node's data once (the *grant signal*), which fires its successor's watch. See
 * docs/recipes.md, "Leases", for the argument that no wake-up is missed.
 */

/** Lease nodes among `children`, in queue order: by sequence as a number. */
export function orderLeases(children: readonly string[]): ParsedLeaseNode[] {
  return inQueueOrder(children, parseLeaseNode);
}

export type LeasePosition =
  | { readonly kind: 'missing' }
  /** Numbered where the directory's counter no longer orders nodes: never granted. */
  | { readonly kind: 'retire' }
  /** Holds; `successor`: a node queues behind it, and may wait for its grant signal. */
  | { readonly kind: 'holding'; readonly successor: boolean }
  /** The first waiter: it watches the directory's children. */
  | { readonly kind: 'head' }
  /**
   * A later waiter: it watches `predecessor`. `deputy`: it stands right behind the head,
   * so it is likely the head when it wakes (and then reads the children with a watch).
   */
  | { readonly kind: 'waiting'; readonly predecessor: ParsedLeaseNode; readonly deputy: boolean };

/**
 * Where `node` stands among `children` in a semaphore of `maxLeases`. As for locks (see
 * `placeIn`), a node numbered past the counter's safe range, or sharing its number, is
 * never granted. Such nodes only ever add to the count ahead of the others (a wrapped,
 * negative one sorts first), so they can delay grants, never add one.
 */
export function leasePositionOf(children: readonly string[], node: string, maxLeases: number): LeasePosition {
  const queue = orderLeases(children);
  const index = placeIn(queue, node);
  if (typeof index !== 'number') return index;
  if (index < maxLeases) return { kind: 'holding', successor: index < queue.length - 1 };
  if (index === maxLeases) return { kind: 'head' };
  return { kind: 'waiting', predecessor: queue[index - 1], deputy: index === maxLeases + 1 };
}

/** Lease nodes whose name starts with `prefix` (one attempt's guid and marker), lowest first. */
export function leaseNodesWithPrefix(children: readonly string[], prefix: string): string[] {
  return orderLeases(children.filter((child) => child.startsWith(prefix))).map((entry) => entry.node);
}
