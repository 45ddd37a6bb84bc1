import { keptHoldIn } from './kept-hold.js';
import { parseLockNode, RETIRE_SEQUENCE, type ParsedLockNode } from './lock-node.js';

/**
 * The pure part of the recipe: given a lock directory's children, who holds, who waits
 * and whom each waiter must watch. Kept free of I/O so it can be unit-tested exhaustively.
 */

/** A queue node: its name, and ZooKeeper's sequence suffix as a number. */
export interface Sequenced {
  readonly node: string;
  readonly sequence: number;
}

/**
 * The children `parse` accepts, in queue order: by sequence as a number. Equal sequences
 * (only past the counter's limit) keep the listing's order; they carry no order at all,
 * which is why `placeIn` never grants a node that shares its number.
 */
export function inQueueOrder<T extends Sequenced>(
  children: readonly string[],
  parse: (child: string) => T | null,
): T[] {
  const queue: T[] = [];
  for (const child of children) {
    const parsed = parse(child);
    if (parsed) queue.push(parsed);
  }
  return queue.sort((a, b) => a.sequence - b.sequence);
}

/** Lock nodes among `children`, in queue order (see `inQueueOrder`). */
export function orderQueue(children: readonly string[]): ParsedLockNode[] {
  return inQueueOrder(children, parseLockNode);
}

/**
 * Where `node` stands in `queue`: its index, else `missing`, or `retire` when it is
 * numbered past the counter's safe range or shares its number (see `RETIRE_SEQUENCE`):
 * such a node is never granted.
 */
export function placeIn(
  queue: readonly Sequenced[],
  node: string,
): number | { readonly kind: 'missing' } | { readonly kind: 'retire' } {
  const index = queue.findIndex((entry) => entry.node === node);
  if (index < 0) return { kind: 'missing' };
  const { sequence } = queue[index];
  if (sequence < 0 || sequence >= RETIRE_SEQUENCE) return { kind: 'retire' };
  if (queue[index - 1]?.sequence === sequence || queue[index + 1]?.sequence === sequence) return { kind: 'retire' };
  return index;
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
  | { readonly kind: 'waiting'; readonly blocker: ParsedLockNode }
  /** Free but for a kept hold (see core/port/kept-hold): waits for its marker to go. */
  | { readonly kind: 'kept'; readonly marker: string }
  /** Numbered where the directory's counter no longer orders nodes: never granted. */
  | { readonly kind: 'retire' };

/**
 * Where `node` stands in `children`: absent, holding, waiting behind one node, behind a kept
 * hold, or past the counter's safe range. A kept hold blocks only the node that would hold
 * (the others wait on the node before them as ever: no herd when it ends), of either mode.
 */
export function positionOf(children: readonly string[], node: string): QueuePosition {
  const queue = orderQueue(children);
  const index = placeIn(queue, node);
  if (typeof index !== 'number') return index;
  const blocker = blockerAt(queue, index);
  if (blocker) return { kind: 'waiting', blocker };
  const marker = keptHoldIn(children);
  return marker ? { kind: 'kept', marker } : { kind: 'holding' };
}

/** Which nodes of `queue` (all of `children`) hold: those nothing blocks, and none while a kept hold lasts. */
export function holdingIn(children: readonly string[], queue: readonly ParsedLockNode[]): (index: number) => boolean {
  const kept = keptHoldIn(children) !== undefined;
  return (index) => !kept && blockerAt(queue, index) === null;
}

/** Lock nodes whose name starts with `prefix` (guid + marker), lowest sequence first. */
export function nodesWithPrefix(children: readonly string[], prefix: string): string[] {
  return orderQueue(children.filter((child) => child.startsWith(prefix))).map((entry) => entry.node);
}
