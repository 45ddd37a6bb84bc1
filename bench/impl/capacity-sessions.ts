import { addCounts, countsDelta } from '../support/request-counts.js';
import type { CapacityGoParams, CapacityGoResult, CapacitySetupParams, Counts } from '../workers/impl.protocol.js';
import { now, ownCpuNs } from './bench-impl.js';

/** Callback of one cycle: the error, or null. */
type Done = (error: Error | null) => void;

/** One session of scenario 10 as a Node worker runs it, on a lock of its own. */
export interface CapacitySession {
  /** One acquire + release; `done` once the release answered, as the implementation's own release does. */
  cycle(done: Done): void;
  /** What it sent so far, by op (a copy). */
  counts(): Counts;
  /** Resolves once the server answered everything it sent (ours' release answers before its delete is confirmed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Opens a session on `server` whose lock is `name`. */
export type OpenCapacitySession = (server: string, name: string) => Promise<CapacitySession>;

/**
 * Scenario 10's ops (`capacity.setup`, `capacity.go`, `capacity.close`) for a Node worker,
 * over the sessions `open` makes: the loop, the window and the counting are the same for
 * ours and raw; only a session's cycle differs.
 */
export class CapacitySessions {
  private sessions: CapacitySession[] = [];

  constructor(private readonly open: OpenCapacitySession) {}

  async setup({ prefix, sessions }: CapacitySetupParams): Promise<object> {
    await this.close();
    const opened = await Promise.allSettled(sessions.map((s) => this.open(s.server, `${prefix}-${s.index}`)));
    this.sessions = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    // One cycle each before the timed loop: the lock directories exist, and first use is paid for.
    await Promise.all(this.sessions.map((session) => loop(session, 0n, () => undefined)));
    await Promise.all(this.sessions.map((session) => session.settled()));
    return {};
  }

  async go({ windowStartNs, windowEndNs }: CapacityGoParams): Promise<CapacityGoResult> {
    const [start, end] = [BigInt(windowStartNs), BigInt(windowEndNs)];
    const before = this.sessions.map((session) => session.counts());
    // The process's CPU at each end of the window, read by timers between cycles.
    const readings = [start, end].map(
      (at) =>
        new Promise<{ cpuNs: number; at: bigint }>((resolve) =>
          setTimeout(() => resolve({ cpuNs: ownCpuNs(), at: now() }), Math.max(0, Number(at - now()) / 1e6)),
        ),
    );
    let cycles = 0;
    let windowCycles = 0;
    const loops = await Promise.allSettled(
      this.sessions.map((session) =>
        loop(session, end, (endedAt) => {
          cycles++;
          if (endedAt >= start && endedAt < end) windowCycles++;
        }),
      ),
    );
    const [first, last] = await Promise.all(readings);
    await Promise.allSettled(this.sessions.map((session) => session.settled()));
    const failed = loops.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) throw failed.reason;
    const counts: Counts = {};
    this.sessions.forEach((session, i) => addCounts(counts, countsDelta(before[i], session.counts())));
    return {
      windowCycles,
      cycles,
      counts,
      windowCpuNs: last.cpuNs - first.cpuNs,
      windowSampledNs: Number(last.at - first.at),
    };
  }

  async close(): Promise<object> {
    const sessions = this.sessions;
    this.sessions = [];
    await Promise.allSettled(sessions.map((session) => session.close()));
    return {};
  }
}

/** Cycles one after another, callback to callback, until one ends at or after `until`. */
function loop(session: CapacitySession, until: bigint, ended: (at: bigint) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const next: Done = (error) => {
      if (error) return reject(error);
      const at = now();
      ended(at);
      if (at >= until) return resolve();
      session.cycle(next);
    };
    session.cycle(next);
  });
}
