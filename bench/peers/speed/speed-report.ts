/** The speed tables and the issue's two goals, for the peers page (docs/bench/latest-peers.md). */
import type { PeerId } from '../peer-lock.js';
import type { SpeedResults, SpeedRow } from './speed-pass.js';

/** The goals at this one-way delay (ms): a LAN a zone apart. */
export const GOAL_DELAY_MS = 1;
/** Uncontended cycles/s: ours ÷ redlock on one Redis, at least. */
export const UNCONTENDED_GOAL = 1.0;
/** Handoff p50: ours ÷ the fastest Redis lock's, at most. */
export const HANDOFF_GOAL = 0.75;

const num = (value: number, digits = 3): string => {
  if (!Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return Number(value.toPrecision(digits)).toString();
};

const delayLabel = (delayMs: number): string => (delayMs ? `${delayMs} ms each way (delay proxy)` : 'loopback');

/** One table per delay: a metric a row, a lock a column. */
export function speedTables(results: SpeedResults): string[] {
  const lines: string[] = [];
  for (const delayMs of [0, ...results.delays]) {
    const rows = results.rows.filter((row) => row.delayMs === delayMs);
    if (rows.length === 0) continue;
    const metric = (label: string, unit: string, value: (row: SpeedRow) => string): string =>
      `| ${label} | ${unit} | ${rows.map(value).join(' | ')} |`;
    lines.push(
      `### ${delayLabel(delayMs)}`,
      '',
      `| metric | unit | ${rows.map((row) => row.peer).join(' | ')} |`,
      `| --- | --- | ${rows.map(() => '---:').join(' | ')} |`,
      metric('uncontended acquire + release', 'cycles/s', (r) => num(r.uncontended.cyclesPerSecond)),
      metric('ours ÷ this lock, uncontended', '×', (r) =>
        num(ratio(rows, 'ours', r, (x) => x.uncontended.cyclesPerSecond)),
      ),
      metric('client CPU per uncontended cycle', 'µs', (r) => num(r.uncontended.clientCpuUs)),
      metric('server CPU per uncontended cycle', 'µs', (r) => num(r.uncontended.serverCpuUs)),
      metric('handoff, release to the waiter’s grant, p50', 'ms', (r) => num(r.handoff.p50 / 1e3)),
      metric('handoff p99', 'ms', (r) => num(r.handoff.p99 / 1e3)),
      metric('ours ÷ this lock, handoff p50', '×', (r) => num(ratio(rows, 'ours', r, (x) => x.handoff.p50))),
      metric('handoffs measured', 'n', (r) => String(r.handoff.n)),
      metric(`${results.counts.contenders} contenders on one key`, 'grants/s', (r) => num(r.contended.grantsPerSecond)),
      metric('contenders’ CPU per grant', 'µs', (r) => num(r.contended.clientCpuUs)),
      metric('calls failed while contending', 'n', (r) => String(r.contended.failures)),
      metric('calls failed otherwise', 'n', (r) => String(r.failures)),
      metric('holds of two clients that intersected', 'n', (r) => String(r.overlaps)),
      '',
    );
  }
  return lines;
}

/** `ours` ÷ `row` of a metric (1 for ours itself). */
function ratio(rows: readonly SpeedRow[], ours: PeerId, row: SpeedRow, metric: (row: SpeedRow) => number): number {
  const mine = rows.find((r) => r.peer === ours);
  return mine ? metric(mine) / metric(row) : Number.NaN;
}

export interface GoalRow {
  readonly goal: string;
  readonly measured: string;
  readonly needed: string;
  readonly result: 'PASS' | 'FAIL' | 'n/a';
}

/** The issue's goals at 1 ms each way, judged from the rows of that delay. */
export function speedGoals(results: SpeedResults): GoalRow[] {
  const rows = results.rows.filter((row) => row.delayMs === GOAL_DELAY_MS);
  const ours = rows.find((row) => row.peer === 'ours');
  const redlock = rows.find((row) => row.peer === 'redlock-1');
  const redisLocks = rows.filter((row) => row.peer !== 'ours' && row.handoff.n > 0);
  const fastest = redisLocks.sort((a, b) => a.handoff.p50 - b.handoff.p50)[0];
  const judge = (value: number, pass: boolean): GoalRow['result'] =>
    Number.isFinite(value) ? (pass ? 'PASS' : 'FAIL') : 'n/a';
  const uncontended = ours && redlock ? ours.uncontended.cyclesPerSecond / redlock.uncontended.cyclesPerSecond : NaN;
  const handoff = ours && fastest ? ours.handoff.p50 / fastest.handoff.p50 : NaN;
  return [
    {
      goal: `uncontended cycles/s at ${GOAL_DELAY_MS} ms each way: ours ÷ redlock on one Redis`,
      measured: `${num(uncontended)}× (${num(ours?.uncontended.cyclesPerSecond ?? NaN)} ÷ ${num(redlock?.uncontended.cyclesPerSecond ?? NaN)})`,
      needed: `>= ${UNCONTENDED_GOAL}×`,
      result: judge(uncontended, uncontended >= UNCONTENDED_GOAL),
    },
    {
      goal: `handoff p50 at ${GOAL_DELAY_MS} ms each way: ours ÷ the fastest Redis lock's${fastest ? ` (${fastest.peer})` : ''}`,
      measured: `${num(handoff)}× (${num((ours?.handoff.p50 ?? NaN) / 1e3)} ÷ ${num((fastest?.handoff.p50 ?? NaN) / 1e3)} ms)`,
      needed: `<= ${HANDOFF_GOAL}×`,
      result: judge(handoff, handoff <= HANDOFF_GOAL),
    },
  ];
}

export function goalTable(goals: readonly GoalRow[]): string[] {
  return [
    '| goal | measured | needed | result |',
    '| --- | --- | --- | --- |',
    ...goals.map((g) => `| ${g.goal} | ${g.measured} | ${g.needed} | ${g.result} |`),
  ];
}

/**
 * What decides each figure at the goals' delay: the round trips a cycle or a handoff waits
 * for (`ROUND_TRIPS_WAITED`), and what is left over, the servers' and clients' own work,
 * measured as the difference.
 */
/**
 * The round trips an uncontended cycle (acquire, then release) of each lock waits for,
 * counted from each library's code (see docs/compare.md) and measured through a long delay
 * by test/bench/peer-locks.spec.ts.
 */
export const ROUND_TRIPS_WAITED: Readonly<Record<PeerId, number>> = {
  ours: 1, // create and getChildren sent together; the release's delete is not waited for
  'redlock-1': 2, // the acquire's script, then the release's script
  'redlock-3': 2, // the same on three servers at once: the slowest of three answers
  'redis-semaphore': 2,
  'nest-redlock': 2,
  murlock: 2,
};

export function whatDecides(results: SpeedResults): string[] {
  const rows = results.rows.filter((row) => row.delayMs === GOAL_DELAY_MS);
  if (rows.length === 0) return [];
  const rtt = 2 * GOAL_DELAY_MS;
  const lines = [
    `At ${GOAL_DELAY_MS} ms each way a round trip is ${rtt} ms. An uncontended cycle of this library waits for one ` +
      '(the create of its node and the read of the queue are sent together; the release sends its delete and returns, ' +
      'and the next create queues behind it on the same connection); every Redis lock here waits for two (SET NX ' +
      'by script, then the delete by script, each answered before the call returns). The rest of each cycle is ' +
      'the servers’ and the clients’ own work, ZooKeeper’s including a write to its transaction log, forced to ' +
      'disk (forceSync=yes) before it answers, for the create and for the delete:',
    '',
    '| lock | cycle | round trips waited | the rest (server and client work) |',
    '| --- | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const cycleMs = 1e3 / row.uncontended.cyclesPerSecond;
    const waited = ROUND_TRIPS_WAITED[row.peer];
    lines.push(
      `| ${row.peer} | ${num(cycleMs)} ms | ${waited} (${waited * rtt} ms) | ${num(cycleMs - waited * rtt)} ms |`,
    );
  }
  lines.push(
    '',
    'A handoff of this library is the holder’s delete reaching ZooKeeper (half a round trip), its commit to the ' +
      'log, the watch’s notification to the next in line (half a round trip), and that waiter’s read of the queue ' +
      '(one round trip): two round trips and a log write, with no polling. A Redis lock’s waiter learns of the ' +
      'release only at its next retry: redis-semaphore retries every 10 ms (half a period on average, then a round ' +
      'trip), redlock every 200 ms ± a jitter, murlock after a wait that grows with each try.',
    '',
  );
  return lines;
}
