import type { HeldLocksResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, type Scenario } from './scenario.js';

export interface HeldLocksSample extends HeldLocksResult {
  readonly locks: number;
  readonly batch: number;
}

/**
 * 12. Many distinct locks held at once by one process (one session), taken `batch` at a
 * time as a user's `Promise.all` would, from cold names (each acquire creates its lock's
 * directory): the time to take them all; the client heap per held lock (heapUsed after
 * full GCs while holding them, minus before, in a probe process of its own as scenario 4);
 * what they cost the servers while held (data size and znodes per lock from `mntr`, watches
 * from `wchs`); then every release until ZooKeeper confirmed it, and that no lock is left.
 */
export const heldLocksScenario: Scenario<HeldLocksSample> = {
  id: 12,
  key: 'heldLocks',
  title: 'many locks held at once by one process: heap and server cost per lock',
  impls: ['ours'],
  slots: 1,

  async run(ctx, impl) {
    const { locks, batch } = ctx.counts.heldLocks;
    const result = await ctx
      .worker(impl)
      .request<HeldLocksResult>('heldLocks', { prefix: `held-${ctx.round}`, locks, batch }, 600_000);
    return { locks, batch, ...result };
  },

  describe: (s) =>
    `${s.locks} locks held: taken in ${(s.acquireNs / 1e9).toFixed(2)} s, ${(s.heapPerLockBytes / 1024).toFixed(3)} KB heap/lock, ` +
    `${(s.server.dataBytes / s.locks).toFixed(0)} B and ${(s.server.znodes / s.locks).toFixed(2)} znodes/lock on the server, ` +
    `${s.server.watches} watches; left ${s.left.listed} listed, ${s.left.ephemerals} ephemerals`,

  summarize(samples) {
    const first = Object.values(samples).flat()[0];
    const [n, batch] = [first?.locks ?? 0, first?.batch ?? 0];
    const row = (
      id: string,
      label: string,
      unit: string,
      better: 'higher' | 'lower',
      value: (s: HeldLocksSample) => number,
    ) =>
      metricRow({
        id: `heldLocks.${id}`,
        scenario: 12,
        label,
        unit,
        better,
        rounds: byImpl(samples, value),
        ratios: false,
      });
    return {
      metrics: [
        row(
          'acquireAllMs',
          `acquire ${n} locks, ${batch} at a time (one session)`,
          'ms',
          'lower',
          (s) => s.acquireNs / 1e6,
        ),
        row(
          'acquiresPerSec',
          `acquire ${n} locks, ${batch} at a time: rate`,
          'locks/s',
          'higher',
          (s) => s.locks / (s.acquireNs / 1e9),
        ),
        row(
          'heapPerLockKB',
          `client heap per held lock (${n} held)`,
          'KB/lock',
          'lower',
          (s) => s.heapPerLockBytes / 1024,
        ),
        row(
          'serverBytesPerLock',
          'server data size per held lock (mntr approximate data size)',
          'B/lock',
          'lower',
          (s) => s.server.dataBytes / s.locks,
        ),
        row(
          'znodesPerLock',
          'znodes per held lock (its directory and its node)',
          'znodes/lock',
          'lower',
          (s) => s.server.znodes / s.locks,
        ),
        row(
          'watches',
          `watches the servers hold for ${n} held locks (wchs)`,
          'watches',
          'lower',
          (s) => s.server.watches,
        ),
        row(
          'releaseAllMs',
          `release ${n} locks, until every release is confirmed`,
          'ms',
          'lower',
          (s) => s.releaseNs / 1e6,
        ),
      ],
      roundTrips: [],
      problems: (samples.ours ?? []).flatMap((s, i) =>
        s.left.listed > 0 || s.left.ephemerals > 0
          ? [
              `12: round ${i + 1}: after releasing ${s.locks} locks, ${s.left.listed} still listed, and the session still owns ${s.left.ephemerals} ephemeral node(s) (dump)`,
            ]
          : [],
      ),
    };
  },
};
