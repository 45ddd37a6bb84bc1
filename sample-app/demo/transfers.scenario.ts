import type { Availability } from '../src/shows/show.model.js';
import { loadAll, pace, type DemoContext, type ScenarioReport } from './demo.scenario.js';
import { expectJson } from './json-http.client.js';
import { pair, summarizeTransfers, transfersTable, type TransfersSummary } from './transfers.summary.js';

const SEATS = 40;

/**
 * Seat transfers (`@WithLock` with two names: a multi-lock): two shows, one seat moved at a
 * time, every other transfer in the opposite direction, round-robin over the instances, so
 * opposite transfers from different instances overlap all the time. Through the locked
 * endpoint, then through the unlocked control.
 */
export async function runTransfers(context: DemoContext): Promise<ScenarioReport> {
  const transfers = context.short ? 8 : 120;
  const locked = await transfer(context, transfers, 'locked', '');
  const unlocked = await transfer(context, transfers, 'unlocked', '/unlocked');
  const ok = locked.failed === 0 && locked.astray === 0;
  const lines = [
    ok
      ? `transfers: ${locked.moved} confirmed, half of them each way, from ${context.apps.length} instances at once: no deadlock, and the shows hold ${pair(locked.after)} seats as expected.`
      : `FAILED: transfers under both locks: ${locked.failed} not confirmed (e.g. ${locked.failure ?? '-'}); the shows hold ${pair(locked.after)} seats, not ${pair(locked.expected)}.`,
    unlocked.astray > 0
      ? `transfers unlocked (control): the shows hold ${pair(unlocked.after)} seats, not ${pair(unlocked.expected)}: ${unlocked.astray} seats created, destroyed or misplaced by overlapping read-modify-writes.`
      : `transfers unlocked (control): no seat went astray this time; concurrent transfers did not happen to overlap (run without --short for more load).`,
  ];
  return {
    title: `Seat transfers (@WithLock with both shows' locks): two shows with ${SEATS} seats each, ${transfers} transfers of one seat, alternately each way, round-robin over the instances, ${pace(context, transfers)}.`,
    table: transfersTable([locked, unlocked]),
    lines,
    ok,
  };
}

async function transfer(
  context: DemoContext,
  transfers: number,
  endpoint: 'locked' | 'unlocked',
  path: string,
): Promise<TransfersSummary> {
  const shows = [`demo-matinee-${endpoint}`, `demo-evening-${endpoint}`] as const;
  const forward = (i: number): boolean => i % 2 === 0;
  await Promise.all(
    shows.map((show) => expectJson('PUT', `${context.apps[0].url}/shows/${show}`, 200, { seats: SEATS })),
  );
  const answers = await loadAll(context, `transfers ${endpoint}`, transfers, (i) => {
    const [from, to] = forward(i) ? shows : [shows[1], shows[0]];
    return { path: `/shows/${from}/transfers${path}`, body: { to, seats: 1 } };
  });
  const after = await Promise.all(
    shows.map((show) => expectJson<Availability>('GET', `${context.apps[0].url}/shows/${show}`, 200)),
  );
  return summarizeTransfers({
    endpoint: endpoint === 'locked' ? 'both locks' : 'unlocked (control)',
    answers,
    forward,
    before: [SEATS, SEATS],
    after: [after[0].seats, after[1].seats],
  });
}
