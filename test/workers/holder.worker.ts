// A lock holder in its own process, for the process-death tests: it takes one lock and
// then reports, one JSON line per event on stdout and in the order it saw them, what
// happens to it while the test kills it (SIGKILL), stops it (SIGTERM) or pauses it
// (SIGSTOP/SIGCONT).
//
// Events: `session` (id and password in hex, each time a new session connects), `held`
// (fencing token, node path), `aborted` (the held lock's signal, with its reason; with
// `maxHoldMs` the holder is told when it runs out), the
// client's `disconnected`, `connected`, `session-lost`, and on SIGTERM `closing`/`closed`.
// With `traceSockets`, also `zk-socket` for every byte chunk (`data`) or FIN (`end`) that
// reaches the process from ZooKeeper: anything the server tells it, logged before the
// ZooKeeper client sees it.
import { Socket } from 'node:net';

import { ZkLockBackend, type ZkLockHandle, type ZkSessionLostError } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  name: string;
  sessionTimeoutMs: number;
  traceSockets?: boolean;
  /** The acquire's `maxHoldMs`, if any: the holder never releases, so it runs out. */
  maxHoldMs?: number;
  /** Takes these locks with `acquireAll` instead of `name` alone (`held` reports the first's path). */
  group?: string[];
}

let seq = 0;
function report(event: string, fields: Record<string, unknown> = {}): void {
  // Date.now(): the test compares it with when it sent a signal (a clock shared by processes).
  process.stdout.write(`${JSON.stringify({ seq: seq++, t: Date.now(), event, ...fields })}\n`);
}

/** Wraps Socket#emit so that input from a TCP peer is reported before anyone handles it. */
function traceTcpInput(): void {
  const tcp = new WeakSet<Socket>();
  const emit = Socket.prototype.emit;
  Socket.prototype.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (this.remotePort !== undefined) tcp.add(this); // stdio pipes have no remote port
    if (tcp.has(this) && (event === 'data' || event === 'end')) {
      report('zk-socket', { what: event, bytes: event === 'data' ? (args[0] as Buffer).length : 0 });
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as Args;
  if (args.traceSockets) traceTcpInput();
  const locks = await ZkLockBackend.connect({
    connectionString: args.connectionString,
    rootPath: args.rootPath,
    sessionTimeoutMs: args.sessionTimeoutMs,
  });
  let sessionId = '';
  const reportSession = (): void => {
    const { session } = locks.client;
    if (session.id === sessionId) return;
    sessionId = session.id;
    const { sessionPassword } = session.credentials();
    report('session', { id: session.id, password: sessionPassword.toString('hex'), timeoutMs: session.timeoutMs });
  };
  reportSession();
  locks.client.on('connected', () => {
    report('connected');
    reportSession();
  });
  locks.client.on('disconnected', () => report('disconnected'));
  locks.client.on('session-lost', (error: ZkSessionLostError) => report('session-lost', { why: error.why }));

  let closing = false;
  process.on('SIGTERM', () => {
    if (closing) return;
    closing = true;
    report('closing');
    locks.close().then(
      () => {
        report('closed');
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`close failed: ${String((error as Error).stack ?? error)}\n`);
        process.exit(1);
      },
    );
  });

  const options = { timeoutMs: 30_000, maxHoldMs: args.maxHoldMs };
  const group = args.group ? await locks.acquireAll(args.group, options) : undefined;
  const lock = (group?.handles[0] ?? (await locks.acquire(args.name, options))) as ZkLockHandle;
  const { signal } = group ?? lock;
  signal.addEventListener('abort', () => {
    const reason = signal.reason as Error & { cause?: ZkSessionLostError };
    report('aborted', { error: reason.name, why: reason.cause?.why, message: reason.message });
  });
  report('held', { token: String(lock.fencingToken), path: lock.path });
  // Holds until the test ends it; the ZooKeeper client keeps the process alive.
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
