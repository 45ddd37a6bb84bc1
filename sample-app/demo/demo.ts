// The README's demo: three sample-app instances, each its own process with its own
// ZooKeeper session, (1) sell the seats of one show, then, side by side, (2) move seats
// between two shows in both directions at once and (3) charge customers through a payment
// partner that admits 3 calls at a time; each through the guarded endpoint and through an
// unguarded control.
// Then (4) a zombie: an instance stopped between its read and its write, its sale to
// PostgreSQL refused through PgFence, and written over a newer sale without it.
// Starts a throwaway ZooKeeper unless ZK_CONNECT is set, and a throwaway PostgreSQL
// (Debian's, as the tests do) unless DATABASE_URL is set. `--short` (or DEMO_SHORT=1) is
// the quick run for CI.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PgServer } from '../../test/support/postgres/pg-server.js';
import { ZkServer } from '../../test/support/zookeeper/zk-server.js';
import type { DemoContext } from './demo.scenario.js';
import { PaymentPartnerStub } from './payment-partner.stub.js';
import { runPayments } from './payments.scenario.js';
import { runSales } from './sales.scenario.js';
import { buildIfNeeded } from './sample-app.build.js';
import { SampleAppProcess } from './sample-app.process.js';
import { runTransfers } from './transfers.scenario.js';
import { runZombie } from './zombie.scenario.js';

const SHORT = process.argv.includes('--short') || process.env.DEMO_SHORT === '1';
const CONCURRENCY = 12;
const INSTANCES = ['a', 'b', 'c'];

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const say = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Undoes one thing the demo started; `false` when that went wrong. */
type Cleanup = () => Promise<boolean | void> | boolean | void;

async function demo(cleanups: Cleanup[], signal: AbortSignal): Promise<boolean> {
  buildIfNeeded(log);
  const [zkConnect, databaseUrl] = await Promise.all([
    process.env.ZK_CONNECT || startZooKeeper(cleanups),
    process.env.DATABASE_URL || startPostgres(cleanups),
  ]);
  const storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-demo-store-'));
  cleanups.push(() => rmSync(storeDir, { recursive: true, force: true }));
  const partner = await PaymentPartnerStub.start();
  cleanups.push(() => partner.close());
  log(`starting ${INSTANCES.length} sample-app instances…`);
  const env = { PARTNER_URL: partner.url, DATABASE_URL: databaseUrl, DEMO_PAUSE: '1' };
  const apps = await startInstances(zkConnect, storeDir, env, cleanups);
  say(`ZooKeeper ${zkConnect}; store ${storeDir}`);
  say(`PostgreSQL ${databaseUrl}`);
  say(`instances ${apps.map((a) => `${a.instance} ${a.url}`).join(', ')}`);
  say(`payment partner ${partner.url}, refusing more than ${partner.maxConcurrent} charges at once`);

  const context: DemoContext = { apps, short: SHORT, concurrency: CONCURRENCY, signal };
  const sales = await runSales(context);
  // Transfers and payments share nothing (not a lock, not the partner): they run side by side.
  const reports = [sales, ...(await Promise.all([runTransfers(context), runPayments(context, partner)]))];
  // Last: it stops two instances for a while, and their sessions expire.
  reports.push(await runZombie(context));
  for (const report of reports) say(`\n${report.title}\n\n${report.table}\n\n${report.lines.join('\n')}`);
  say();
  return reports.every((report) => report.ok);
}

async function startZooKeeper(cleanups: Cleanup[]): Promise<string> {
  log('starting a throwaway ZooKeeper…');
  const server = new ZkServer({ tickTime: 200 });
  cleanups.push(() => server.destroy());
  await server.start();
  return server.connectionString;
}

async function startPostgres(cleanups: Cleanup[]): Promise<string> {
  log('starting a throwaway PostgreSQL…');
  const server = new PgServer();
  cleanups.push(() => server.destroy());
  await server.start();
  return server.url;
}

async function startInstances(
  zkConnect: string,
  storeDir: string,
  env: Record<string, string>,
  cleanups: Cleanup[],
): Promise<SampleAppProcess[]> {
  const started = await Promise.allSettled(
    INSTANCES.map((instance) => SampleAppProcess.start({ zkConnect, storeDir, instance, env })),
  );
  const apps = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  cleanups.push(() => stopInstances(apps));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return apps;
}

/** SIGTERM to every instance; each should shut down gracefully and exit with 0. */
async function stopInstances(apps: SampleAppProcess[]): Promise<boolean> {
  if (apps.length === 0) return true;
  const exits = await Promise.all(apps.map((app) => app.stop()));
  const clean = exits.every((exit) => exit.code === 0);
  say(
    `instances stopped by SIGTERM: ${apps.map((app, i) => `${app.instance} exit ${exits[i].code ?? exits[i].signal}`).join(', ')}.`,
  );
  if (!clean)
    apps.forEach((app, i) => exits[i].code !== 0 && log(`output of instance ${app.instance}:\n${app.output}`));
  return clean;
}

async function main(): Promise<number> {
  const cleanups: Cleanup[] = [];
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  let ok = false;
  try {
    ok = await demo(cleanups, interrupt.signal);
  } catch (error) {
    log(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      const done = await Promise.resolve()
        .then(cleanup)
        .catch((error: unknown) => (log(`clean-up failed: ${String(error)}`), false));
      ok = done !== false && ok;
    }
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
  return ok ? 0 : 1;
}

void main().then((code) => (process.exitCode = code));
