// One worker of the chaos test (test/faults/chaos.spec.ts): runs critical sections on a
// shared counter file under one lock, until SIGTERM, while the test kills it, expires its
// session, cuts its network and kills ZooKeeper servers. Every step is appended to a log
// file shared by all workers and the test, which checks the invariants afterwards.
//
// Log lines: `<kind> <section or worker> <token or -> <t> [details]`, one write(2) each
// (appendFileSync, O_APPEND), so lines never interleave and the file order is the order
// of the writes. `t` is process.hrtime.bigint(): CLOCK_MONOTONIC, one clock for every
// process on the host (counted from boot), in ns, never stepped by NTP. Date.now() can
// jump and has only millisecond resolution (sections last a few ms); performance.now()
// counts from each process's own start. So timestamps of different processes compare.
//
// Also `connected`/`disconnected`/`session-lost` lines, and on stdout
// `session <worker> <id hex> <password hex>` each time a new session connects, so the
// test can expire it.
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockTimeoutError, ZkLockBackend, type ZkLockHandle, type ZkSessionLostError } from '../../lib/index.js';

interface Args {
  worker: string;
  incarnation: number;
  connectionString: string;
  rootPath: string;
  name: string;
  log: string;
  counter: string;
  sessionTimeoutMs: number;
  acquireTimeoutMs: number;
  /** The share of sections that last seconds instead of milliseconds. */
  longSectionRatio: number;
  /** How long a section lasts when the test asks for a long one (SIGUSR2). */
  askedLongMs: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const me = `${args.worker}.${args.incarnation}`;
const log = (kind: string, id: string, token: string, ...details: string[]): void =>
  appendFileSync(args.log, `${[kind, id, token, String(process.hrtime.bigint()), ...details].join(' ')}\n`);
const randomInt = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min + 1));

async function main(): Promise<void> {
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort()); // ends the loop after the current section
  let longNext = false;
  process.on('SIGUSR2', () => (longNext = true)); // the test wants the next section long

  const locks = await ZkLockBackend.connect({ connectionString: args.connectionString, rootPath: args.rootPath, sessionTimeoutMs: args.sessionTimeoutMs });
  let sessionId = '';
  const reportSession = (): void => {
    const { session } = locks.client;
    if (!session.isConnected || session.id === sessionId) return;
    sessionId = session.id;
    const { sessionId: id, sessionPassword } = session.credentials();
    process.stdout.write(`session ${args.worker} ${id.toString('hex')} ${sessionPassword.toString('hex')}\n`);
    log('session', me, '-', session.id);
  };
  log('connected', me, '-');
  reportSession();
  locks.client.on('connected', () => {
    log('connected', me, '-');
    reportSession();
  });
  locks.client.on('disconnected', () => log('disconnected', me, '-'));
  locks.client.on('session-lost', (error: ZkSessionLostError) => log('session-lost', me, '-', error.why.replace(/\s+/g, '_')));

  for (let n = 0; !stop.signal.aborted; n++) {
    let lock: ZkLockHandle;
    try {
      lock = await locks.acquire(args.name, { timeoutMs: args.acquireTimeoutMs, signal: stop.signal });
    } catch (error) {
      if (stop.signal.aborted) break;
      if (!(error instanceof LockTimeoutError)) throw error;
      log('timeout', me, '-');
      continue;
    }
    const section = `${me}.${n}`;
    const token = String(lock.fencingToken);
    const onAbort = (): void => log('aborted', section, token, String((lock.signal.reason as Error).message).replace(/\s+/g, '_'));
    lock.signal.addEventListener('abort', onAbort);

    // Inside: read, pause, and write only if the lock is still trusted. The pause is mostly
    // a few ms, now and then (or when asked) seconds, logged as long=<ms>, for faults to
    // strike inside.
    const pause = longNext ? args.askedLongMs : Math.random() < args.longSectionRatio ? randomInt(500, 3000) : randomInt(1, 4);
    longNext = false;
    const t = process.hrtime.bigint();
    const [value, writer] = readFileSync(args.counter, 'utf8').trim().split(' ');
    const flags = [...(pause >= 500 ? [`long=${pause}`] : []), ...(lock.signal.aborted ? ['aborted-at-entry'] : [])];
    appendFileSync(args.log, `${['enter', section, token, t, value, writer, ...flags].join(' ')}\n`);
    if (lock.signal.aborted) onAbort(); // aborted before we could listen
    await sleep(pause);
    if (lock.signal.aborted) {
      log('abandon', section, token);
    } else {
      const next = Number(value) + 1;
      // Replaced atomically (write aside, rename over): a SIGKILL between the truncate and
      // the write of a plain overwrite would leave an empty counter for the next holder.
      const aside = `${args.counter}.${section}`;
      writeFileSync(aside, `${next} ${section}`);
      renameSync(aside, args.counter);
      log('done', section, token, String(next));
    }
    await lock.release();
    log('exit', section, token);
    await sleep(randomInt(0, 2));
  }
  await locks.close();
  log('closed', me, '-');
  process.exit(0);
}

main().catch((error: unknown) => {
  log('error', me, '-', String((error as Error).stack ?? error).replace(/\s+/g, '_'));
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
