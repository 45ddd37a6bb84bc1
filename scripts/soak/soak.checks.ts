import type { GrowthVerdict } from './growth.check.js';
import type { WorkloadStats } from './lock.workload.js';

export interface RunFacts {
  readonly cycles: number;
  readonly drops: number;
  readonly reconnects: number;
  readonly sessionsLost: number;
  readonly sessionsChanged: number;
  readonly stats: WorkloadStats;
}

/** ZooKeeper once every client closed. */
export interface EndState {
  /** Every znode left under the soak's root (lock nodes and directories). */
  readonly nodesLeft: string[];
  /** Watches the server still holds (`wchs`; only our clients ever used this server). */
  readonly watchesLeft: number;
  /** Our sessions the server still tracks (`dump`). */
  readonly sessionsLeft: number;
}

/** Counts that must be exactly zero at the last checkpoint: nothing waits or is held then. */
const ZERO_WHEN_IDLE = ['serverWatches', 'watchers', 'rawWatchPaths', 'heldOrWaiting', 'pendingRequests'] as const;

/**
 * Everything the run must show, each failure naming its metric: no growth; nothing left
 * when idle; the load it claims (contention, waits, reconnects, the cycles asked for);
 * locks that excluded each other; sessions that survived every reconnect.
 */
export function runChecks(
  run: RunFacts,
  idle: Readonly<Record<string, number>>,
  verdicts: readonly GrowthVerdict[],
): string[] {
  const failures: string[] = [];
  for (const v of verdicts) {
    if (v.failed)
      failures.push(
        `${v.metric} grows: ${v.first} -> ${v.last} over the window (+${v.rise}), ${(v.perCycle * 1000).toPrecision(3)} per 1,000 cycles`,
      );
  }
  for (const metric of ZERO_WHEN_IDLE) {
    if (idle[metric] !== 0)
      failures.push(`${metric} is ${idle[metric]} at the last checkpoint, with no lock held or awaited (expected 0)`);
  }
  const { stats } = run;
  if (stats.exclusionViolations) failures.push(`exclusion: ${stats.exclusionViolations} grants overlapped a writer`);
  if (stats.errorCount)
    failures.push(`errors: ${stats.errorCount} unexpected errors, first: ${stats.errors.join(' | ')}`);
  // Proof the run did what it claims: without these the growth checks would prove little.
  if (stats.busy === 0) failures.push('contention: no tryAcquire or skip ever found a lock taken');
  if (stats.waited === 0) failures.push('contention: no acquire ever waited behind another holder');
  if (stats.timedOut === 0 || stats.aborted === 0)
    failures.push(`waits cut short: ${stats.timedOut} timed out, ${stats.aborted} aborted (expected some of each)`);
  if (run.reconnects < run.drops * 0.9 || run.drops === 0)
    failures.push(`reconnects: ${run.reconnects} for ${run.drops} dropped connections`);
  if (run.sessionsLost || run.sessionsChanged)
    failures.push(
      `sessions: ${run.sessionsLost} lost, ${run.sessionsChanged} replaced (a reconnect must keep the session)`,
    );
  return failures;
}

export function endChecks(end: EndState): string[] {
  const failures: string[] = [];
  if (end.nodesLeft.length)
    failures.push(`znodes left after close: ${end.nodesLeft.length} (${end.nodesLeft.slice(0, 5).join(', ')})`);
  if (end.watchesLeft) failures.push(`server watches left after close: ${end.watchesLeft}`);
  if (end.sessionsLeft) failures.push(`sessions left on the server after close: ${end.sessionsLeft}`);
  return failures;
}
