import { percentile } from '../support/sample-stats.js';
import type { Counts, ReadHeavyResult } from '../workers/impl.protocol.js';
import { byImpl, metricRow, roundTripRows, type Scenario } from './scenario.js';

export interface ReadHeavySample {
  readonly readers: number;
  readonly readerCyclesPerSec: number;
  readonly writerGrants: number;
  readonly writerWaitP50Ms: number;
  readonly writerWaitP99Ms: number;
  /** Acquires given up after the stall timeout (a deadlock, or a wait that long). */
  readonly stalls: number;
  readonly stallTimeoutMs: number;
  readonly counts: Counts;
  readonly countedCycles: number;
}

/**
 * 6. R readers (each its own session) loop read acquire + release on one name while one
 * writer (its own session) takes the write lock every `writerPauseMs`: readers' throughput,
 * and how long the writer waits for its grant. Every acquire gives up after a stall timeout
 * (counted; a writer's wait then counts as that long): Kazoo 2.8's ReadLock deadlocks with
 * a writer otherwise (a reader waits on a higher writer that waits on it, Kazoo #649).
 */
export const readHeavyScenario: Scenario<ReadHeavySample> = {
  id: 6,
  key: 'readHeavy',
  title: 'read-heavy: R readers and 1 writer on one name',
  impls: ['ours', 'kazoo', 'curator'],
  slots: 1,

  async run(ctx, impl) {
    const { readers, durationMs, writerPauseMs, stallTimeoutMs } = ctx.counts.readHeavy;
    const r = await ctx.worker(impl).request<ReadHeavyResult>('readHeavy', {
      name: `readheavy-${ctx.round}`,
      readers,
      durationMs,
      writerPauseMs,
      stallTimeoutMs,
    });
    const waitsMs = r.writerWaitsNs.map((ns) => ns / 1e6);
    return {
      readers,
      readerCyclesPerSec: r.readerCycles / (r.elapsedNs / 1e9),
      writerGrants: waitsMs.length - r.writerStalls,
      stalls: r.readerStalls + r.writerStalls,
      stallTimeoutMs,
      writerWaitP50Ms: percentile(waitsMs, 50),
      writerWaitP99Ms: percentile(waitsMs, 99),
      counts: r.counts,
      countedCycles: r.countedCycles,
    };
  },

  describe: (s) =>
    `readers ${s.readerCyclesPerSec.toFixed(0)} cycles/s, writer wait p50 ${s.writerWaitP50Ms.toFixed(2)} ms (${s.writerGrants} grants), ${s.stalls} stalls`,

  summarize(samples) {
    const readers = Object.values(samples).flat()[0]?.readers ?? 0;
    return {
      metrics: [
        metricRow({
          id: 'readHeavy.readerCyclesPerSec',
          scenario: 6,
          label: `${readers} readers + 1 writer: reader throughput`,
          unit: 'cycles/s',
          better: 'higher',
          rounds: byImpl(samples, (s) => s.readerCyclesPerSec),
        }),
        metricRow({
          id: 'readHeavy.writerWaitP50Ms',
          scenario: 6,
          label: 'writer wait p50',
          unit: 'ms',
          better: 'lower',
          rounds: byImpl(samples, (s) => s.writerWaitP50Ms),
        }),
        metricRow({
          id: 'readHeavy.writerWaitP99Ms',
          scenario: 6,
          label: 'writer wait p99',
          unit: 'ms',
          better: 'lower',
          rounds: byImpl(samples, (s) => s.writerWaitP99Ms),
        }),
        metricRow({
          id: 'readHeavy.stalls',
          scenario: 6,
          label: 'acquires stalled past the timeout (deadlock)',
          unit: 'per run',
          better: 'lower',
          rounds: byImpl(samples, (s) => s.stalls),
          ratios: false,
        }),
      ],
      roundTrips: roundTripRows(6, 'read or write cycle (read-heavy)', samples, (s) => ({
        counts: s.counts,
        units: s.countedCycles,
      })),
      problems: [],
    };
  },
};
