import type { MetricRow, TargetRow } from '../bench.results.js';
import { UNCONTENDED_FLOOR, UNCONTENDED_WIRE_FLOOR } from '../scenarios/uncontended.scenario.js';
import { median } from '../support/sample.stats.js';
import { notMeasured, ratioTargetRow } from './ratio-target.row.js';
import { ratioCell } from './table.report.js';

const CYCLE = { scenario: 1, per: 'uncontended cycle' };
const HANDOFF = { scenario: 2, per: 'handoff' };

/** The targets against Apache Curator 5, each ratio measured side by side in one run. */
export function curatorTargets(metrics: readonly MetricRow[]): TargetRow[] {
  return [
    ratioTargetRow(metrics, {
      id: '1c',
      label: 'uncontended cycles/s: ours ÷ Curator',
      metricId: 'uncontended.cyclesPerSec',
      other: 'curator',
      op: '>=',
      threshold: 1.3,
      trips: CYCLE,
    }),
    floorRow(metrics, '1f', ''),
    floorRow(metrics, '1g', ''),
    ratioTargetRow(metrics, {
      id: '2c',
      label: 'handoff p50: ours ÷ Curator',
      metricId: 'handoff.p50Us',
      other: 'curator',
      op: '<=',
      threshold: 1.0,
      trips: HANDOFF,
    }),
    largestDrain(metrics),
    ratioTargetRow(metrics, {
      id: '6',
      label: 'read-heavy reader throughput: ours ÷ Curator InterProcessReadWriteLock',
      metricId: 'readHeavy.readerCyclesPerSec',
      other: 'curator',
      op: '>=',
      threshold: 2,
      trips: { scenario: 6, per: 'read or write cycle' },
    }),
    ratioTargetRow(metrics, {
      id: '7c',
      label: 'multi-lock, 5 free names, p50: ours acquireAll ÷ Curator InterProcessMultiLock',
      metricId: 'multiLock.groupP50Us',
      other: 'curator',
      trips: { scenario: 7, per: 'names as a group' },
    }),
    ratioTargetRow(metrics, {
      id: '8c',
      label: 'leases, grants/s: ours ÷ Curator InterProcessSemaphoreV2',
      metricId: 'leases.grantsPerSec',
      other: 'curator',
      trips: { scenario: 8, per: 'grant (C=' },
    }),
  ];
}

/** 3b: the drain of the most waiters this run measured (50 in a full run), ours ÷ Curator. */
function largestDrain(metrics: readonly MetricRow[]): TargetRow {
  const sizes = metrics
    .filter((m) => /^drain\.\d+\.drainMs$/.test(m.id))
    .map((m) => Number(m.id.split('.')[1]))
    .sort((a, b) => a - b);
  const n = sizes[sizes.length - 1];
  if (n === undefined) return notMeasured('3b', 'drain of 50 waiters: ours ÷ Curator', '<= 1×');
  return ratioTargetRow(metrics, {
    id: '3b',
    label: `drain of ${n} waiters: ours ÷ Curator`,
    metricId: `drain.${n}.drainMs`,
    other: 'curator',
    op: '<=',
    threshold: 1.0,
    trips: { scenario: 3, per: `N=${n})` },
  });
}

/**
 * The ensemble pass's targets (scenarios 1 and 2 on three servers, every session on one
 * follower): Curator's uncontended target is higher there, and the handoff's is the same.
 */
export function ensembleTargets(metrics: readonly MetricRow[]): TargetRow[] {
  return [
    ratioTargetRow(metrics, {
      id: 'E1',
      label: 'ensemble: uncontended cycles/s: ours ÷ Curator',
      metricId: 'uncontended.cyclesPerSec',
      other: 'curator',
      op: '>=',
      threshold: 1.4,
      trips: CYCLE,
    }),
    floorRow(metrics, 'E1f', 'ensemble: '),
    floorRow(metrics, 'E1g', 'ensemble: '),
    ratioTargetRow(metrics, {
      id: 'E2',
      label: 'ensemble: handoff p50: ours ÷ Curator',
      metricId: 'handoff.p50Us',
      other: 'curator',
      op: '<=',
      threshold: 1.0,
      trips: HANDOFF,
    }),
  ];
}

const FLOORS = {
  f: { metricId: UNCONTENDED_FLOOR, what: "raw loop sending ours' requests together" },
  g: { metricId: UNCONTENDED_WIRE_FLOOR, what: 'the same requests spoken by hand, no client library' },
};

/**
 * Beside 1c and E1, ÷ Curator per round: (f) the raw loop sending the read behind the
 * create, as ours does: no client whose `release()` answers after its delete is committed
 * sends fewer round trips, so this bounds ours on node-zookeeper-client; (g) the same
 * requests on a session spoken by hand: what a leaner transport could reach at best.
 */
function floorRow(metrics: readonly MetricRow[], id: string, scope: string): TargetRow {
  const { metricId, what } = FLOORS[id.slice(-1) as keyof typeof FLOORS];
  const label = `${scope}uncontended cycles/s: ${what} ÷ Curator (the floor's reach)`;
  const floor = metrics.find((m) => m.id === metricId)?.rounds.raw;
  const curator = metrics.find((m) => m.id === 'uncontended.cyclesPerSec')?.rounds.curator;
  if (!floor?.length || !curator?.length) return notMeasured(id, label, 'reported (no target)');
  const perRound = floor.slice(0, curator.length).map((value, i) => value / curator[i]);
  const measured = ratioCell(median(perRound), [Math.min(...perRound), Math.max(...perRound)]);
  return { id, label, measured, threshold: 'reported (no target)', pass: null, note: 'no threshold' };
}
