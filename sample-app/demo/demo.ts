// The README's demo: three sample-app instances, each its own process with its own
// ZooKeeper session, sell the seats of one show to concurrent customers, through the
// locked endpoint and through the unlocked control. Starts a throwaway ZooKeeper unless
// ZK_CONNECT is set. `--short` (or DEMO_SHORT=1) is the quick run for CI.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ZkServer } from '../../test/support/zookeeper/zk-server.js';
import type { Availability, Reservation } from '../src/shows/show.model.js';
import { fencingCheck, summarize, summaryTable, type EndpointSummary } from './demo.summary.js';
import { expectJson } from './json-http.client.js';
import { progressLine } from './progress.line.js';
import { runLoad } from './reservation.load.js';
import { buildIfNeeded } from './sample-app.build.js';
import { SampleAppProcess } from './sample-app.process.js';

const SHORT = process.argv.includes('--short') || process.env.DEMO_SHORT === '1';
const SEATS = SHORT ? 60 : 300;
const CONCURRENCY = 12;
const INSTANCES = ['a', 'b', 'c'];

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const say = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Undoes one thing the demo started; `false` when that went wrong. */
type Cleanup = () => Promise<boolean | void> | boolean | void;

async function demo(cleanups: Cleanup[], signal: AbortSignal): Promise<boolean> {
  buildIfNeeded(log);
  const zkConnect = process.env.ZK_CONNECT || (await startZooKeeper(cleanups));
  const storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-demo-store-'));
  cleanups.push(() => rmSync(storeDir, { recursive: true, force: true }));
  log(`starting ${INSTANCES.length} sample-app instances…`);
  const apps = await startInstances(zkConnect, storeDir, cleanups);
  say(`ZooKeeper ${zkConnect}; store ${storeDir}`);
  say(`instances ${apps.map((a) => `${a.instance} ${a.url}`).join(', ')}`);
  say(`Each run: a show with ${SEATS} seats, ${SEATS} reservations round-robin over the instances, ${CONCURRENCY} at a time.\n`);

  const locked = await runEndpoint(apps, 'locked', '', signal);
  const unlocked = await runEndpoint(apps, 'unlocked', '/unlocked', signal);
  const { tokens } = await recordedTokens(apps[0]);
  const fencing = fencingCheck(tokens);

  say(`\n${summaryTable([locked, unlocked])}\n`);
  say(locked.lost === 0 ? `locked: ${locked.confirmed} reservations confirmed, ${locked.sold} seats sold, no update lost.` : `FAILED: the locked endpoint lost ${locked.lost} updates.`);
  say(unlocked.lost > 0
    ? `unlocked (control): ${unlocked.confirmed} confirmed but only ${unlocked.sold} seats sold: ${unlocked.lost} updates lost to concurrent read-modify-writes.`
    : `unlocked (control): lost no update this time; concurrent requests did not happen to overlap (run without --short for more load).`);
  say(`${fencing.ok ? 'fencing' : 'FAILED: fencing'}: ${fencing.text}.`);
  if (locked.failed > 0) say(`FAILED: ${locked.failed} locked reservations were not confirmed, e.g. ${locked.failure}.`);
  return locked.lost === 0 && locked.failed === 0 && fencing.ok;
}

async function startZooKeeper(cleanups: Cleanup[]): Promise<string> {
  log('starting a throwaway ZooKeeper…');
  const server = new ZkServer({ tickTime: 200 });
  cleanups.push(() => server.destroy());
  await server.start();
  return server.connectionString;
}

async function startInstances(zkConnect: string, storeDir: string, cleanups: Cleanup[]): Promise<SampleAppProcess[]> {
  const started = await Promise.allSettled(INSTANCES.map((instance) => SampleAppProcess.start({ zkConnect, storeDir, instance })));
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
  say(`instances stopped by SIGTERM: ${apps.map((app, i) => `${app.instance} exit ${exits[i].code ?? exits[i].signal}`).join(', ')}.`);
  if (!clean) apps.forEach((app, i) => exits[i].code !== 0 && log(`output of instance ${app.instance}:\n${app.output}`));
  return clean;
}

async function runEndpoint(apps: SampleAppProcess[], endpoint: string, path: string, signal: AbortSignal): Promise<EndpointSummary> {
  const show = `demo-${endpoint}`;
  await expectJson('PUT', `${apps[0].url}/shows/${show}`, 200, { seats: SEATS });
  const progress = progressLine(endpoint.padEnd(8), SEATS);
  const answers = await runLoad({
    urls: apps.map((app) => app.url),
    path: `/shows/${show}/reservations${path}`,
    requests: SEATS,
    concurrency: CONCURRENCY,
    signal,
    onProgress: progress.update,
  });
  progress.end();
  if (signal.aborted) throw new Error('interrupted');
  const { remaining } = await expectJson<Availability>('GET', `${apps[apps.length - 1].url}/shows/${show}`, 200);
  return summarize({ endpoint: endpoint === 'locked' ? 'locked' : 'unlocked (control)', seats: SEATS, answers, remaining });
}

async function recordedTokens(app: SampleAppProcess): Promise<{ tokens: string[] }> {
  const reservations = await expectJson<Reservation[]>('GET', `${app.url}/shows/demo-locked/reservations`, 200);
  return { tokens: reservations.flatMap((r) => (r.fencingToken === null ? [] : [r.fencingToken])) };
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
