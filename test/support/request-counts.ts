import type { ZkLockBackend } from '../../lib/index';

/** Requests counted by the client since `before` (a `counter.snapshot()`), without the liveness heartbeat. */
export function countsSince(client: ZkLockBackend, before: Record<string, number>): Record<string, number> {
  const after = client.client.counter.snapshot();
  return Object.fromEntries(
    Object.keys(after)
      .filter((op) => op !== 'heartbeat' && after[op] !== (before[op] ?? 0))
      .map((op) => [op, after[op] - (before[op] ?? 0)]),
  );
}
