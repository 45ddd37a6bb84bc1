/**
 * The faults of the peers pass (issue 38), the same for every lock, and which of their
 * variants each lock meets: a lock on Redis meets the Redis variants, ours the ZooKeeper
 * one. The rigs that strike them are in ./fault-rigs.ts.
 */
import type { PeerId } from '../peer-lock.js';

export const FAULT_IDS = ['pause', 'partition', 'restart', 'failover', 'long-work'] as const;
/**
 * `pause`: (a) the holder stopped (SIGSTOP) past the TTL, then resumed. `partition`: (b) the
 * holder cut off from its lock service by a silent proxy, then healed. `restart`: (c) the
 * lock server killed (kill -9) and restarted. `failover`: (d) the primary lost, its replica
 * promoted. `long-work`: (e) work that outlives the TTL, no fault.
 */
export type FaultId = (typeof FAULT_IDS)[number];

/** What a restarted server keeps: Redis without persistence, Redis with AOF, ZooKeeper on its data. */
export type RestartVariant = 'redis-none' | 'redis-aof' | 'zookeeper';

/** One fault as a lock meets it: a fault, and for `restart` which server and persistence. */
export interface FaultCase {
  readonly fault: FaultId;
  readonly variant?: RestartVariant;
}

/** How the fault is written in the page's tables. */
export const FAULT_TITLES: Record<FaultId, string> = {
  pause: '(a) holder paused (SIGSTOP) for 1.5 × TTL',
  partition: '(b) holder cut off (silent proxy) for 1.5 × TTL',
  restart: '(c) lock server killed and restarted',
  failover: '(d) primary lost, replica promoted',
  'long-work': '(e) work for 2.5 × TTL, no fault',
};

export const VARIANT_TITLES: Record<RestartVariant, string> = {
  'redis-none': 'Redis, no persistence',
  'redis-aof': 'Redis, AOF every second',
  zookeeper: 'ZooKeeper, on its data',
};

/** The title of a case: its fault's, and its variant's. */
export function caseTitle(faultCase: FaultCase): string {
  const title = FAULT_TITLES[faultCase.fault];
  return faultCase.variant ? `${title}: ${VARIANT_TITLES[faultCase.variant]}` : title;
}

/**
 * The cases `peer` meets for `fault`, in order: for `restart` the Redis variants for a
 * Redis lock and the ZooKeeper one for ours; one case (no variant) for the other faults.
 */
export function casesFor(fault: FaultId, peer: PeerId): FaultCase[] {
  if (fault !== 'restart') return [{ fault }];
  return peer === 'ours'
    ? [{ fault, variant: 'zookeeper' }]
    : [
        { fault, variant: 'redis-none' },
        { fault, variant: 'redis-aof' },
      ];
}

/** Why `peer` sits out `faultCase` (the table says so in place of figures); undefined when it takes part. */
export function notApplicable(faultCase: FaultCase, peer: PeerId): string | undefined {
  if (faultCase.fault === 'failover' && peer === 'redlock-3')
    return 'n/a: its three servers are independent primaries, with no replica to fail over to';
  return undefined;
}

/** What the page notes under a case for `peer`, where the fault struck it differently. */
export function caseNote(faultCase: FaultCase, peer: PeerId): string | undefined {
  if (faultCase.fault === 'restart' && peer === 'redlock-3')
    return 'one of its three servers restarted: the other two still hold the key, so a majority is not to be had (its quorum’s claim)';
  if (faultCase.fault === 'partition' && peer === 'redlock-3') return 'all three of the holder’s links cut';
  if (faultCase.fault === 'failover' && peer === 'ours') return 'a 3-server ensemble, its leader killed';
  return undefined;
}
