/**
 * The worker ops of the multi-lock and lease scenarios (7 and 8), for the Node workers, the
 * Kazoo worker and the Curator worker alike; the framing and the clock are impl.protocol.ts's.
 */
import type { Counts } from './impl.protocol.js';

/**
 * Scenario 7: several free locks from one session, as variants taken in turns, a fresh
 * order each cycle: `all` (ours: `acquireAll`; Curator: one `InterProcessMultiLock`), `seq`
 * (one lock after another, then released in reverse order), `one` (a single name).
 */
export type MultiLockVariant = 'all' | 'seq' | 'one';

export interface MultiLockParams {
  /** Names are `<prefix>-<variant>-<i>` (and `<prefix>-one`): every variant its own free locks. */
  readonly prefix: string;
  readonly locks: number;
  readonly cycles: number;
  readonly warmup: number;
}
export interface MultiLockVariantRun {
  /** Each measured cycle: acquire of every lock of the variant + release of all, in order. */
  readonly latenciesNs: number[];
  /** Summed over the measured cycles (snapshots taken outside the timed part). */
  readonly counts: Counts;
}
export interface MultiLockResult {
  readonly variants: Partial<Record<MultiLockVariant, MultiLockVariantRun>>;
}

/**
 * Scenario 8: `contenders` sessions loop on one lease semaphore of `maxLeases`: acquire,
 * hold `holdMs`, release. The window opens at grant number `warmupGrants` and closes after
 * `grants` more grants, or `durationMs` after it opened (exactly one of the two).
 */
export interface LeasesParams {
  readonly name: string;
  readonly contenders: number;
  readonly maxLeases: number;
  readonly holdMs: number;
  readonly warmupGrants: number;
  readonly grants?: number;
  readonly durationMs?: number;
}
export interface LeasesResult {
  /** Grants within the window. */
  readonly grants: number;
  readonly elapsedNs: number;
  /** Summed over every session, between the window's ends (notifications included). */
  readonly counts: Counts;
  /** The most leases held at once in the run, seen by the contenders: never above maxLeases. */
  readonly maxHolding: number;
}
