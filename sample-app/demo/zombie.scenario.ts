import { setTimeout as sleep } from 'node:timers/promises';

import type { Seat } from '../src/seats/seat.model.js';
import type { DemoContext, ScenarioReport } from './demo.scenario.js';
import { expectJson, requestJson, type HttpResult } from './json-http.client.js';
import type { SampleAppProcess } from './sample-app.process.js';
import {
  fencedVerdict,
  summarizeZombie,
  unfencedVerdict,
  ZOMBIE,
  zombieTable,
  type ZombieSummary,
} from './zombie.summary.js';

/** How long an instance may take to stop itself once asked. */
const STOP_TIMEOUT_MS = 30_000;

/**
 * A zombie (seats in PostgreSQL, `@WithLock(showLock)`): one instance takes the show's lock,
 * reads which seat is free and stops (SIGSTOP, as a long GC pause would) before its write;
 * its ZooKeeper session expires, the next holders (another instance) sell; then it resumes
 * and writes as if it still held the lock. Fenced by `PgFence.check`, PostgreSQL refuses
 * that write; unfenced (the control), it overwrites a newer sale. Both rounds side by side,
 * each with its own zombie (instances a and b) and show; instance c sells.
 */
export async function runZombie(context: DemoContext): Promise<ScenarioReport> {
  const sales = context.short ? 3 : 10;
  const [a, b, c] = context.apps;
  const [fenced, unfenced] = await Promise.all([
    round(context, 'fenced', '', a, c, sales),
    round(context, 'unfenced (control)', '/unfenced', b, c, sales),
  ]);
  const verdict = fencedVerdict(fenced);
  return {
    title: `A zombie (PostgreSQL, PgFence): an instance stopped between its read and its write while its session expires, then resumed after another instance sold ${sales} seats under the lock.`,
    table: zombieTable([fenced, unfenced]),
    lines: [verdict.text, unfencedVerdict(unfenced)],
    ok: verdict.ok,
  };
}

async function round(
  context: DemoContext,
  endpoint: string,
  path: string,
  zombieApp: SampleAppProcess,
  seller: SampleAppProcess,
  count: number,
): Promise<ZombieSummary> {
  const show = `zombie${path.replace('/', '-')}`;
  await expectJson('PUT', `${seller.url}/shows/${show}/seats`, 200, { seats: count + 2 });
  const zombie = requestJson(
    'POST',
    `${zombieApp.url}/shows/${show}/seats${path}`,
    { customer: ZOMBIE, pause: true },
    120_000,
  );
  await untilStopped(zombieApp, zombie, context.signal);
  let sales: HttpResult[];
  try {
    sales = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        requestJson('POST', `${seller.url}/shows/${show}/seats${path}`, { customer: `customer-${i + 1}` }, 60_000),
      ),
    );
  } finally {
    zombieApp.signal('SIGCONT');
  }
  const zombieAnswer = await zombie;
  const seats = await expectJson<Seat[]>('GET', `${seller.url}/shows/${show}/seats`, 200);
  return summarizeZombie({ endpoint, zombie: zombieAnswer, sales, seats });
}

/** Waits until `app` has stopped itself; fails if its answer comes first (it did not stop). */
async function untilStopped(app: SampleAppProcess, answer: Promise<HttpResult>, signal: AbortSignal): Promise<void> {
  let answered: HttpResult | Error | undefined;
  void answer.then(
    (result) => (answered = result),
    (error: Error) => (answered = error),
  );
  const until = Date.now() + STOP_TIMEOUT_MS;
  while (!app.stopped) {
    if (answered)
      throw new Error(
        `instance ${app.instance} answered instead of stopping: ${answered instanceof Error ? answered.message : JSON.stringify(answered)}`,
      );
    if (signal.aborted) throw new Error('interrupted');
    if (Date.now() > until) throw new Error(`instance ${app.instance} did not stop within ${STOP_TIMEOUT_MS} ms`);
    await sleep(20);
  }
}
