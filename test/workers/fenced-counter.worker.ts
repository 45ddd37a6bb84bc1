// A process looping on one lock while the test restarts ZooKeeper servers under it
// (test/faults/production-topology.spec.ts): acquire, then a read-modify-write of a counter
// file that lives outside ZooKeeper (read, pause a few ms, write +1), release, again,
// until SIGTERM. Failed acquires and releases (expected while servers restart) are
// reported and the loop goes on; only an error that is not the library's own ends it.
//
// The counter file holds `<value> <fencing token of the last write>`: a write whose token
// is not above the stored one is refused, as a fenced resource would (reported `fenced`).
//
// One JSON line per event on stdout:
//   session  {id}                           each session this client connects with
//   disconnected {}                         the connection to a server dropped
//   grant    {token, start, end, wrote}     a critical section; start/end are
//            process.hrtime.bigint() (CLOCK_MONOTONIC: one clock for every process on
//            the host), as strings; `wrote` is false when the lock was lost inside it
//   fail     {phase, error, message}        an acquire or release that failed
//   fenced   {token, stored}                the counter refused a stale token
//   torn     {read}                         the counter file was read halfway through a write
//   closed   {grants, writes, failures}     the client is closed; the process then exits
//            by itself (a handle left open by the library would keep it alive)
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { ZkLockBackend, ZkLockError } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  name: string;
  sessionTimeoutMs: number;
  counter: string;
  /** An acquire waiting longer than this is reported as a failure and tried again. */
  acquireTimeoutMs: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const report = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};
const now = (): string => process.hrtime.bigint().toString();

/** The read-modify-write under the lock; false when the write was skipped. */
async function increment(token: bigint, held: () => boolean): Promise<boolean> {
  const read = readFileSync(args.counter, 'utf8');
  const [, value, stored] = /^(\d+) (-|\d+)$/.exec(read) ?? [];
  if (value === undefined) {
    report('torn', { read }); // caught another writer halfway: only without exclusion
    return false;
  }
  await sleep(2 + Math.floor(Math.random() * 4));
  if (!held()) return false; // lost inside: a holder must not write any more
  if (stored !== '-' && BigInt(stored) >= token) {
    report('fenced', { token: String(token), stored });
    return false;
  }
  writeFileSync(args.counter, `${Number(value) + 1} ${token}`);
  return true;
}

async function main(): Promise<void> {
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort()); // ends the loop after the current section
  const backend = await ZkLockBackend.connect({
    connectionString: args.connectionString,
    rootPath: args.rootPath,
    sessionTimeoutMs: args.sessionTimeoutMs,
    emptyDirectoryGraceMs: 0,
  });
  let sessionId = '';
  const reportSession = (): void => {
    const { session } = backend.client;
    if (!session.isConnected || session.id === sessionId) return;
    sessionId = session.id;
    report('session', { id: session.id });
  };
  reportSession();
  backend.client.on('connected', reportSession);
  backend.client.on('disconnected', () => report('disconnected'));

  let grants = 0;
  let writes = 0;
  let failures = 0;
  const failed = (phase: string, error: unknown): void => {
    if (!(error instanceof ZkLockError)) throw error; // a bug, not a fault: end the worker
    failures++;
    report('fail', { phase, error: error.name, message: error.message });
  };
  while (!stop.signal.aborted) {
    let lock;
    try {
      lock = await backend.acquire(args.name, { timeoutMs: args.acquireTimeoutMs, signal: stop.signal });
    } catch (error) {
      if (stop.signal.aborted) break;
      failed('acquire', error);
      await sleep(50);
      continue;
    }
    const start = now();
    const wrote = await increment(lock.fencingToken, () => lock.isHeld());
    const end = now();
    grants++;
    if (wrote) writes++;
    report('grant', { token: String(lock.fencingToken), start, end, wrote });
    await lock.release().catch((error: unknown) => failed('release', error));
    await sleep(5); // leaves the CPU to the servers now and then; the others queue meanwhile
  }
  await backend.close();
  report('closed', { grants, writes, failures });
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
