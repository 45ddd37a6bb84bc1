import type { MetricRow, RoundTripRef, RoundTripRow, TargetRow } from '../bench.results.js';
import type { ClientCpuRow } from '../support/client-cpu.js';
import { format } from './number.format.js';

/** Round trips within 2% of each other count as the same. */
const SAME = 0.02;

interface Side {
  readonly name: string;
  readonly row: RoundTripRow;
  /** Time per unit of work, µs: the median latency, or 1 / the median rate (wall time per unit, over all sessions). */
  readonly unitUs: number;
  /** Requests plus watch notifications (`compared` makes it requests only if either side's notifications are not counted). */
  readonly trips: number;
}

/** µs per unit from a metric's median: rates are inverted, latencies converted. */
function unitUs(metric: MetricRow, value: number): number | undefined {
  if (metric.unit.endsWith('/s')) return 1e6 / value;
  if (metric.unit === 'µs') return value;
  if (metric.unit === 'ms') return value * 1e3;
  return undefined;
}

function side(
  ref: RoundTripRef,
  metrics: readonly MetricRow[],
  roundTrips: readonly RoundTripRow[],
  twin: RoundTripRef,
): Side | undefined {
  const metric = metrics.find((m) => m.id === ref.metricId);
  const value = metric?.median[ref.impl];
  const row = roundTrips.find((r) => r.scenario === ref.scenario && r.impl === ref.impl && r.per.includes(ref.per));
  if (!metric || value === undefined || !Number.isFinite(value) || !row) return undefined;
  const us = unitUs(metric, value);
  if (us === undefined) return undefined;
  // Two variants of one implementation are told apart by what picks their rows.
  const name = twin.impl === ref.impl ? `${ref.impl} (${ref.per})` : ref.impl;
  return { name, row, unitUs: us, trips: row.requests + (row.notifications ?? 0) };
}

/** Both sides' round trips on the same footing: notifications only if both counted them (then the note says so). */
function compared(a: Side, b: Side): { a: Side; b: Side; noun: string; caveat: string } {
  if (a.row.notifications !== null && b.row.notifications !== null)
    return { a, b, noun: 'requests + notifications', caveat: '' };
  const uncounted = [a, b].filter((s) => s.row.notifications === null).map((s) => s.name);
  return {
    a: { ...a, trips: a.row.requests },
    b: { ...b, trips: b.row.requests },
    noun: 'requests',
    caveat: ` (Requests only: ${uncounted.join(' and ')}'s watch notifications are not counted in this scenario.)`,
  };
}

function byOp(row: RoundTripRow): string {
  const ops = Object.entries(row.byOp)
    .filter(([op, n]) => op !== 'notification' && n > 0)
    .map(([op, n]) => `${op} ${format(n)}`);
  const notifications =
    row.notifications === null ? 'notifications not counted' : `${format(row.notifications)} notifications`;
  return `${format(row.requests)} requests (${ops.join(', ') || 'none'}) + ${notifications}`;
}

/**
 * Where the time of a missed target goes, from its two sides' round-trip rows: the
 * difference in time per unit split into what the difference in requests (+ notifications)
 * costs, at the other side's time per message, and what is left, which is time per message
 * (the client's own work and its waits between requests, not the number sent).
 */
export function explainMiss(
  target: TargetRow,
  metrics: readonly MetricRow[],
  roundTrips: readonly RoundTripRow[],
  clientCpu: readonly ClientCpuRow[] = [],
): string | undefined {
  if (target.pass !== false || !target.basis) return undefined;
  const sideA = side(target.basis.a, metrics, roundTrips, target.basis.b);
  const sideB = side(target.basis.b, metrics, roundTrips, target.basis.a);
  const missed = `${target.id} missed (${target.label}: ${target.measured}, needed ${target.threshold}).`;
  if (!sideA || !sideB) return `${missed} This run has no round-trip rows of both sides to explain it with.`;
  const { a, b, noun, caveat } = compared(sideA, sideB);
  const unit = a.row.per === b.row.per ? `Per ${a.row.per}` : 'Per unit';
  const head = `${missed} ${unit}: ${a.name} ${byOp(a.row)} in ${format(a.unitUs)} µs; ${b.name} ${byOp(b.row)} in ${format(b.unitUs)} µs.`;
  if (!(a.trips > 0 && b.trips > 0)) return head;
  // Time per message: the unit's time ÷ its requests (+ notifications); for a throughput, wall time over all sessions.
  // Requests sent together (a pipelined read, a multi) share one wait, so they lower it.
  const each = `${format(a.unitUs / a.trips)} µs each against ${format(b.unitUs / b.trips)} µs`;
  const gap = a.unitUs - b.unitUs;
  const extra = a.trips - b.trips;
  const counts = `${format(a.trips)} ${noun} against ${format(b.trips)}`;
  let why: string;
  if (gap <= 0) {
    why = `${a.name} already takes ${format(-gap)} µs less per unit, with ${counts}; the wider margin asked must come from sending fewer or from less time per message (${each}).`;
  } else if (Math.abs(extra) <= SAME * Math.max(a.trips, b.trips)) {
    why = `The same number, ${counts}: the ${format(gap)} µs gap is time per message (${each}), the client's own work and its waits, not the number sent.`;
  } else if (extra > 0) {
    const cost = Math.min(gap, extra * (b.unitUs / b.trips));
    const rest = gap - cost;
    why =
      `${a.name} sends ${format(extra)} more per unit (${counts}); at ${b.name}'s time per message they account for ${format(cost)} µs of the ${format(gap)} µs gap` +
      (rest > 0 ? `, and the other ${format(rest)} µs is time per message (${each}).` : '.');
  } else {
    why = `${a.name} sends ${format(-extra)} fewer per unit (${counts}), so the ${format(gap)} µs gap is all time per message (${each}).`;
  }
  return `${head} ${why}${caveat}${cpuSentence(target, a, b, clientCpu)}${serverSentence(target, metrics, a, b, clientCpu)}`;
}

/**
 * What the ZooKeeper server's CPU says: its share of a core while each side ran, that per
 * unit, and, for a throughput asked as a multiple of the other side's, how much server CPU
 * that rate takes at the cheaper of the two sides' cost per unit. (The cost per unit is not
 * the server's alone: with forceSync one fsync serves every write queued at once, so a
 * client that keeps more requests in flight costs it less per unit.)
 */
function serverSentence(
  target: TargetRow,
  metrics: readonly MetricRow[],
  a: Side,
  b: Side,
  clientCpu: readonly ClientCpuRow[],
): string {
  const shares = sharesOf(target, a, b, clientCpu, 'server');
  if (!shares) return '';
  const { busyA, busyB, cpuA, cpuB } = shares;
  const head = ` The ZooKeeper server meanwhile: ${share(busyA)} while ${a.name} ran, ${share(busyB)} while ${b.name} ran; about ${format(cpuA)} µs of server CPU per unit against ${format(cpuB)} µs.`;
  const times = /^>=\s*([\d.]+)×$/.exec(target.threshold);
  const rate = metrics.find((m) => m.id === target.basis!.a.metricId)?.unit.endsWith('/s');
  if (!times || !rate) return head;
  const asked = Number(times[1]) * (1e6 / b.unitUs);
  const cheaper = Math.min(cpuA, cpuB);
  return `${head} At the rate asked (${format(asked)}/s), even at the cheaper ${format(cheaper)} µs per unit, the server would use ${format((cheaper * asked) / 1e6)} cores.`;
}

/**
 * What the client processes' CPU says of the gap: each side's share of a core while the
 * scenario ran, and that share of its time per unit (the CPU it spent per unit). When the
 * difference in CPU per unit covers the gap, the client's own work explains it.
 */
function cpuSentence(target: TargetRow, a: Side, b: Side, clientCpu: readonly ClientCpuRow[]): string {
  const shares = sharesOf(target, a, b, clientCpu, 'busy');
  if (!shares) return '';
  const { busyA, busyB, cpuA, cpuB } = shares;
  const head = ` Client CPU while the scenario ran: ${a.name} ${share(busyA)}, ${b.name} ${share(busyB)}; about ${format(cpuA)} µs of client CPU per unit against ${format(cpuB)} µs.`;
  const gap = a.unitUs - b.unitUs;
  if (gap <= 0 || cpuA <= cpuB) return head;
  const covered = Math.min(1, (cpuA - cpuB) / gap);
  return `${head} The difference, ${format(cpuA - cpuB)} µs, is ${Math.round(covered * 100)}% of the ${format(gap)} µs gap: the client's own work${covered >= 0.8 ? ' explains it' : ' explains part of it'}.`;
}

/** A note for every missed target with a basis. */
export function missedTargetNotes(
  targets: readonly TargetRow[],
  metrics: readonly MetricRow[],
  roundTrips: readonly RoundTripRow[],
  clientCpu: readonly ClientCpuRow[] = [],
): string[] {
  return targets
    .map((t) => {
      const note = explainMiss(t, metrics, roundTrips, clientCpu);
      return note && note + floorSentence(t, targets);
    })
    .filter((note): note is string => note !== undefined);
}

/** The floors reported beside a ratio target (rows with no threshold of their own). */
const FLOORS_OF: Readonly<Record<string, readonly string[]>> = { '1c': ['1f', '1g'], E1: ['E1f', 'E1g'] };

/**
 * For a missed "at least N×" target with floors beside it: what each floor reached in this
 * run, and whether the best of them reaches the threshold at all. A floor below it means
 * no client sending the same requests that way reached it here.
 */
function floorSentence(target: TargetRow, targets: readonly TargetRow[]): string {
  const asked = /^>=\s*([\d.]+)×$/.exec(target.threshold);
  const floors = (FLOORS_OF[target.id] ?? [])
    .map((id) => targets.find((t) => t.id === id))
    .filter((t): t is TargetRow => t !== undefined && /^[\d.]+×/.test(t.measured));
  if (!asked || !floors.length) return '';
  const what = (f: TargetRow): string =>
    f.label
      .split(': ')
      .slice(-1)[0]
      .replace(/ ÷ Curator \(.*\)$/, '');
  const listed = floors.map((f) => `${f.id}, ${what(f)}: ${f.measured.split(' ')[0]}`);
  const best = Math.max(...floors.map((f) => parseFloat(f.measured)));
  const verdict =
    best < Number(asked[1])
      ? `every floor is below the ${asked[1]}× asked, so nothing sending these requests reached it in this run`
      : `a floor reaches the ${asked[1]}× asked, so the rest of the gap is this client's own cost`;
  return ` Floors in this run (÷ Curator): ${listed.join('; ')}; ${verdict}.`;
}

/**
 * Each side's share of a core (its client processes', or the server's while it ran) and
 * that share of its time per unit; undefined unless both sides, two implementations, have one.
 */
function sharesOf(
  target: TargetRow,
  a: Side,
  b: Side,
  clientCpu: readonly ClientCpuRow[],
  of: 'busy' | 'server',
): { busyA: number; busyB: number; cpuA: number; cpuB: number } | undefined {
  const { basis } = target;
  if (!basis || basis.a.impl === basis.b.impl) return undefined;
  const row = clientCpu.find((r) => r.scenario === basis.a.scenario);
  const [busyA, busyB] = [row?.[of]?.[basis.a.impl], row?.[of]?.[basis.b.impl]];
  if (busyA === undefined || busyB === undefined) return undefined;
  return { busyA, busyB, cpuA: busyA * a.unitUs, cpuB: busyB * b.unitUs };
}

const share = (busy: number): string => `${Math.round(busy * 100)}% of a core`;
