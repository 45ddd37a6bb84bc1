import { parseLockNode, type ParsedLockNode } from '../naming/lock-node.naming.js';

/**
 * The pure part of the recipe: given a lock directory's children, who holds, who waits
 * and whom each waiter must watch. Kept free of I/O so it can be unit-tested exhaustively.
 */

/** Lock nodes among `children`, in queue order (sequence as a number; name breaks ties). */
export function orderQueue(children: readonly string[]): ParsedLockNode[] {
  const queue: ParsedLockNode[] = [];
  for (const child of children) {
    const parsed = parseLockNode(child);
    if (parsed) queue.push(parsed);
  }
  return queue.sort((a, b) => a.sequence - b.sequence || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

/**
 * The node that keeps `index` from holding, or `null` if it holds. A writer is blocked by
 * its immediate predecessor, of either mode; a reader only by the nearest lower writer
 * (higher writers never block it).
 */
export function blockerAt(queue: readonly ParsedLockNode[], index: number): ParsedLockNode | null {
  if (queue[index].mode === 'write') return index > 0 ? queue[index - 1] : null;
  for (let i = index - 1; i >= 0; i--) if (queue[i].mode === 'write') return queue[i];
  return null;
}

export type QueuePosition =
  | { readonly kind: 'missing' }
  | { readonly kind: 'holding' }
  | { readonly kind: 'waiting'; readonly blocker: ParsedLockNode };

/** Where `node` stands in `children`: absent, holding, or waiting behind one node. */
export function positionOf(children: readonly string[], node: string): QueuePosition {
  const queue = orderQueue(children);
  const index = queue.findIndex((entry) => entry.node === node);
  if (index < 0) return { kind: 'missing' };
  const blocker = blockerAt(queue, index);
  return blocker ? { kind: 'waiting', blocker } : { kind: 'holding' };
}

/** The child whose name starts with `prefix` (guid + marker), if the create reached the server. */
export function findByPrefix(children: readonly string[], prefix: string): string | undefined {
  return children.find((child) => child.startsWith(prefix) && parseLockNode(child) !== null);
}
