// One worker of the chaos test (test/faults/chaos.spec.ts): on one ZooKeeper session, runs
// loops of critical sections until SIGTERM (chaos-section.ts): one on the single lock and
// its counter file, one on random multi-locks (a counter file per lock), and a few on the
// leases of one semaphore (chaos-workloads.ts), while the test kills it, expires its
// session, cuts its network and kills ZooKeeper servers. Every step is appended to a log
// file shared by all workers and the test, which checks the invariants afterwards.
//
// Log lines (test/support/chaos-log.ts): `<kind> <id> <token or -> <t> [details]`, one
// write(2) each (appendFileSync, O_APPEND), so lines never interleave and the file order
// is the order of the writes. `t` is process.hrtime.bigint(): CLOCK_MONOTONIC, one clock
// for every process on the host (counted from boot), in ns, never stepped by NTP.
// Date.now() can jump and has only millisecond resolution (sections last a few ms);
// performance.now() counts from each process's own start. So timestamps of different
// processes compare.
//
// Also `connected`/`disconnected`/`session-lost` lines, and on stdout
// `session <worker> <id hex> <password hex>` each time a new session connects, so the
// test can expire it.
import { appendFileSync } from 'node:fs';

import { ZkLockBackend, type ZkSessionLostError } from '../../lib/index.js';
import { runLoop, type Loop, type LoopContext } from './chaos-section';
import { takeLease, takeLock, takeMulti, type Workloads } from './chaos-workloads';

interface Args {
  worker: string;
  incarnation: number;
  connectionString: string;
  rootPath: string;
  log: string;
  workloads: Workloads;
  sessionTimeoutMs: number;
  acquireTimeoutMs: number;
  /** The share of sections that last seconds instead of milliseconds. */
  longSectionRatio: number;
  /** How long a section lasts when the test asks for a long one (SIGUSR2). */
  askedLongMs: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const me = `${args.worker}.${args.incarnation}`;
const logAt = (t: bigint, kind: string, id: string, token: string, ...details: string[]): void =>
  appendFileSync(args.log, `${[kind, id, token, String(t), ...details].join(' ')}\n`);
const log = (kind: string, id: string, token: string, ...details: string[]): void =>
  logAt(process.hrtime.bigint(), kind, id, token, ...details);

async function main(): Promise<void> {
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort()); // ends each loop after its current section

  const backend = await ZkLockBackend.connect({
    connectionString: args.connectionString,
    rootPath: args.rootPath,
    sessionTimeoutMs: args.sessionTimeoutMs,
  });
  reportSessions(backend);

  const { workloads } = args;
  const ctx: LoopContext = {
    process: me,
    log,
    logAt,
    stop: stop.signal,
    longSectionRatio: args.longSectionRatio,
    askedLongMs: args.askedLongMs,
  };
  const options = { timeoutMs: args.acquireTimeoutMs, signal: stop.signal };
  // The test asks for long sections (SIGUSR2) to cut the worker off inside the lock's,
  // and waits for that one only: the other loops' asks lapse after a second, or a loop
  // that was waiting when the worker was cut off would start its long section after the
  // heal, for nothing.
  const lock: Loop = { label: 'lock' };
  const multi: Loop = { label: 'multi', longAskWindowMs: 1000 };
  const leases: Loop[] = Array.from({ length: workloads.lease.loops }, (_, i) => ({
    label: `lease${i + 1}`,
    longAskWindowMs: 1000,
  }));
  process.on('SIGUSR2', () => [lock, multi, ...leases].forEach((l) => (l.longAskedAt = process.hrtime.bigint())));

  await Promise.all([
    runLoop(ctx, lock, (n) => `${me}.${n}`, takeLock(backend, workloads.lock, options)),
    runLoop(ctx, multi, (n) => `${me}.multi-${n}`, takeMulti(backend, workloads.multi, options)),
    ...leases.map((l) => runLoop(ctx, l, (n) => `${me}.${l.label}-${n}`, takeLease(backend, workloads.lease, options))),
  ]);
  await backend.close();
  log('closed', me, '-');
  process.exit(0);
}

/** Logs the connection's ups and downs, and prints each new session's credentials for the test. */
function reportSessions(backend: ZkLockBackend): void {
  let sessionId = '';
  const reportSession = (): void => {
    const { session } = backend.client;
    if (!session.isConnected || session.id === sessionId) return;
    sessionId = session.id;
    const { sessionId: id, sessionPassword } = session.credentials();
    process.stdout.write(`session ${args.worker} ${id.toString('hex')} ${sessionPassword.toString('hex')}\n`);
    log('session', me, '-', session.id);
  };
  log('connected', me, '-');
  reportSession();
  backend.client.on('connected', () => {
    log('connected', me, '-');
    reportSession();
  });
  backend.client.on('disconnected', () => log('disconnected', me, '-'));
  backend.client.on('session-lost', (error: ZkSessionLostError) =>
    log('session-lost', me, '-', error.why.replace(/\s+/g, '_')),
  );
}

/** Any failure ends the worker with code 1, said in the log too (the test reads it as trouble). */
function fail(error: unknown): never {
  log('error', me, '-', String((error as Error).stack ?? error).replace(/\s+/g, '_'));
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
}

// Thrown in a socket's event handler (inside the ZooKeeper client), an error reaches no promise.
process.on('uncaughtException', fail);
main().catch(fail);
