import type { Availability, Reservation } from '../src/shows/show.model.js';
import { loadAll, pace, type DemoContext, type ScenarioReport } from './demo.scenario.js';
import { expectJson } from './json-http.client.js';
import { fencingCheck, salesTable, summarizeSales, type SalesSummary } from './sales.summary.js';

/**
 * Seat sales (`@WithLock(showLock)`): one show, as many reservations as seats, through the
 * locked endpoint and then through the unlocked control.
 */
export async function runSales(context: DemoContext): Promise<ScenarioReport> {
  const seats = context.short ? 60 : 300;
  const locked = await sell(context, seats, 'locked', '');
  const unlocked = await sell(context, seats, 'unlocked', '/unlocked');
  const fencing = fencingCheck(await recordedTokens(context, 'demo-locked'));
  const lines = [
    locked.lost === 0
      ? `locked: ${locked.confirmed} reservations confirmed, ${locked.sold} seats sold, no update lost.`
      : `FAILED: the locked endpoint lost ${locked.lost} updates.`,
    unlocked.lost > 0
      ? `unlocked (control): ${unlocked.confirmed} confirmed but only ${unlocked.sold} seats sold: ${unlocked.lost} updates lost to concurrent read-modify-writes.`
      : `unlocked (control): lost no update this time; concurrent requests did not happen to overlap (run without --short for more load).`,
    `${fencing.ok ? 'fencing' : 'FAILED: fencing'}: ${fencing.text}.`,
  ];
  if (locked.failed > 0)
    lines.push(`FAILED: ${locked.failed} locked reservations were not confirmed, e.g. ${locked.failure}.`);
  return {
    title: `Seat sales (@WithLock): a show with ${seats} seats, ${seats} reservations round-robin over the instances, ${pace(context, seats)}.`,
    table: salesTable([locked, unlocked]),
    lines,
    ok: locked.lost === 0 && locked.failed === 0 && fencing.ok,
  };
}

async function sell(
  context: DemoContext,
  seats: number,
  endpoint: 'locked' | 'unlocked',
  path: string,
): Promise<SalesSummary> {
  const { apps } = context;
  const show = `demo-${endpoint}`;
  await expectJson('PUT', `${apps[0].url}/shows/${show}`, 200, { seats });
  const answers = await loadAll(context, `sales ${endpoint}`, seats, (i) => ({
    path: `/shows/${show}/reservations${path}`,
    body: { customer: `customer-${i + 1}` },
  }));
  const { remaining } = await expectJson<Availability>('GET', `${apps[apps.length - 1].url}/shows/${show}`, 200);
  return summarizeSales({
    endpoint: endpoint === 'locked' ? 'locked' : 'unlocked (control)',
    seats,
    answers,
    remaining,
  });
}

async function recordedTokens(context: DemoContext, show: string): Promise<string[]> {
  const reservations = await expectJson<Reservation[]>('GET', `${context.apps[0].url}/shows/${show}/reservations`, 200);
  return reservations.flatMap((r) => (r.fencingToken === null ? [] : [r.fencingToken]));
}
