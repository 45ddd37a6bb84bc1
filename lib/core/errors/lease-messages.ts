/**
 * The lease recipe's messages, written once here in the style of
 * `../errors/lock.messages.ts`: what happened, to which semaphore, and what to do.
 */
import type { FoundKind, LockKind } from './lock-kind-mismatch.error.js';

const ONE_KIND =
  'A name is a lock or a lease semaphore, never both at once; it may change once nobody holds or awaits it';

export const leaseMessages = {
  optionsObject: 'an object with the number of leases, such as { maxLeases: 3, timeoutMs: 5000 }',
  maxLeases: (limit: number): string =>
    `a whole number of leases from 1 to ${limit}, the same in every client of this semaphore`,
  timeout: (name: string, maxLeases: number, timeoutMs: number): string =>
    timeoutMs === 0
      ? `All ${maxLeases} leases of "${name}" are held and the call asked not to wait (timeoutMs: 0). Retry later, or pass a timeoutMs to wait for one.`
      : `Timed out after ${timeoutMs} ms waiting for one of the ${maxLeases} leases of "${name}". Raise timeoutMs, or list holders and waiters with leaseContenders("${name}").`,
  limitMismatch: (name: string, requested: number, stored: number, where: string): string =>
    `Lease "${name}" was asked for with maxLeases ${requested} while it is held or awaited with maxLeases ${stored} (stored in ${where}); every client must use the same number. Pass maxLeases: ${stored}, or change the number in every client: an idle semaphore (nobody holds or awaits it) takes the new one with its next acquire.`,
  kindMismatch: (name: string, requested: LockKind, found: FoundKind, where: string, maxLeases?: number): string => {
    const what = requested === 'lease' ? `Lease "${name}"` : `Lock "${name}"`;
    switch (found) {
      case 'lease':
        return `${what} cannot be taken while it is held or awaited as a lease semaphore of ${maxLeases} leases (seen in ${where}). ${ONE_KIND}: take it with acquireLease("${name}", { maxLeases: ${maxLeases} }), or use another name for the lock.`;
      case 'lock':
        return `${what} cannot be taken while it is held or awaited as a lock (seen in ${where}, which holds no lease count). ${ONE_KIND}: use another name for the semaphore (e.g. "${name}:leases"), or take it with acquire().`;
      case 'kazoo-semaphore':
        return `${what} cannot be taken: ${where} is laid out as a Kazoo Semaphore (a bare lease count as its data, or unsequenced lease nodes). This library's leases cannot share a semaphore with Kazoo's: use another name, or Kazoo's Semaphore in every client.`;
      default:
        return `${what} cannot be taken: ${where} holds data this library did not write, so it is not one of its lease semaphores. Use another name, or remove that node if nothing uses it.`;
    }
  },
  inZooKeeper: (dir: string): string => `ZooKeeper directory ${dir}`,
  inMemory: 'the in-memory store',
  lost: 'its ZooKeeper session cannot be trusted any more',
} as const;
