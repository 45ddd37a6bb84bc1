import { setTimeout as sleep } from 'node:timers/promises';

import { Pool } from 'pg';

import { StaleFencingTokenError } from '../../lib/index.js';
import { PgFence } from '../../lib/postgres/index.js';
import { openPeer } from './locks/open-peer.js';
import type { PeerLock } from './peer-lock.js';
import type {
  CycleRecord,
  HoldCommand,
  HoldEvent,
  LoopCommand,
  LoopDone,
  PeerCommand,
  PeerWorkerArgs,
  PeerWorkerMessage,
} from './peer-worker.protocol.js';

/**
 * One client of one compared lock, in a process of its own, driven over Node's IPC channel
 * (bench/peers/peer-worker.protocol.ts; the parent's side is ./peer-worker.ts). Started as
 * `fork(this file, [JSON.stringify(args)], { execArgv: ['-r', scripts/ts-register.cjs] })`.
 * It opens its lock, says `ready`, runs each command as it comes, and on `close` closes
 * everything and exits. What it cannot do (a lock that will not open, an error nothing
 * caught: redis-semaphore's refresh rejecting while Redis is down, say) it reports as
 * `fatal`, then exits 1.
 */

const now = (): string => String(process.hrtime.bigint());

/** Set once `close` came: from then on the channel's end is the worker's own doing. */
let closing = false;

/**
 * The parent gone (a benchmark that crashed or was killed): nobody will ever send `close`.
 * Exit rather than hold connections, and locks, for ever.
 */
function parentGone(): void {
  if (!closing) process.exit(3);
}

/**
 * Sends `message` to the parent. A send that fails (EPIPE: the parent closed the channel and
 * its end is not yet read here, as when the send comes before the channel's EOF in one turn
 * of the loop) means the parent is gone, never a fault of the worker's.
 */
function send(message: PeerWorkerMessage): void {
  process.send?.(message, (error: Error | null) => {
    if (error) parentGone();
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

let failed = false;

/** Reports `error` as `fatal` and exits 1 (once the message is on its way, or after a second). */
function fatal(error: unknown): void {
  if (failed) return;
  failed = true;
  const text = error instanceof Error ? (error.stack ?? messageOf(error)) : String(error);
  process.stderr.write(`peer worker: ${text}\n`);
  if (process.connected)
    process.send?.({ type: 'fatal', error: text } satisfies PeerWorkerMessage, () => process.exit(1));
  setTimeout(() => process.exit(1), 1_000).unref();
}

/** Sleeps until the hrtime `at` (ns), if it is still ahead. */
async function until(at: bigint): Promise<void> {
  const aheadMs = Number(at - process.hrtime.bigint()) / 1e6;
  if (aheadMs > 0) await sleep(aheadMs);
}

/**
 * `loop`: back-to-back calls until `cycles` were granted or `durationMs` passed. A call
 * whose body ran is a granted cycle (recorded, and counted towards `cycles`) even if `run`
 * then rejected (a failed release); every rejection is counted as a failure.
 */
async function loop(lock: PeerLock, command: LoopCommand): Promise<LoopDone> {
  if (command.cycles === undefined && command.durationMs === undefined)
    throw new Error('A loop command needs cycles, durationMs or both.');
  if (command.startAt !== undefined) await until(BigInt(command.startAt));
  const deadline =
    command.durationMs === undefined ? undefined : process.hrtime.bigint() + BigInt(command.durationMs) * 1_000_000n;
  const cycles: CycleRecord[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const cpuBefore = process.cpuUsage();
  while (
    (command.cycles === undefined || cycles.length < command.cycles) &&
    (deadline === undefined || process.hrtime.bigint() < deadline)
  ) {
    const requestedAt = now();
    let grantedAt: string | undefined;
    let releasingAt: string | undefined;
    try {
      await lock.run(command.key, async () => {
        grantedAt = now();
        if (command.holdMs > 0) await sleep(command.holdMs);
        releasingAt = now();
      });
    } catch (error) {
      failures++;
      firstFailure ??= messageOf(error);
    }
    const doneAt = now();
    if (grantedAt !== undefined) cycles.push({ requestedAt, grantedAt, releasingAt: releasingAt ?? doneAt, doneAt });
  }
  const cpu = process.cpuUsage(cpuBefore);
  return {
    type: 'loop-done',
    cycles,
    failures,
    ...(firstFailure === undefined ? {} : { firstFailure }),
    cpuUs: cpu.user + cpu.system,
  };
}

/** The errors with which a lock's `run` says the lock was lost while the body ran (ours; redis-semaphore's, by class). */
const LOST_LOCK_ERRORS = new Set(['LockLostError', 'LostLockError']);
const isLostLockError = (error: unknown): boolean =>
  error instanceof Error && (LOST_LOCK_ERRORS.has(error.name) || LOST_LOCK_ERRORS.has(error.constructor.name));

/** The holder's PostgreSQL: the fence and the data table of `PeerWorkerArgs.pg`. */
interface Store {
  readonly pool: Pool;
  readonly fence: PgFence<Pool>;
  readonly dataTable: string;
}

/** One transaction adding one to `row` of the data table: fenced with `token` when given. */
async function write(
  store: Store,
  resource: string,
  row: string,
  holder: string,
  token: bigint | undefined,
): Promise<'landed' | 'refused'> {
  const client = await store.pool.connect();
  try {
    await client.query('BEGIN');
    if (token !== undefined) await store.fence.check(client, resource, token);
    await client.query(`UPDATE ${store.dataTable} SET n = n + 1, last = $2 WHERE id = $1`, [row, holder]);
    await client.query('COMMIT');
    return 'landed';
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (error instanceof StaleFencingTokenError) return 'refused';
    throw error;
  } finally {
    client.release();
  }
}

/**
 * `hold`: one call whose body writes every `writeEveryMs` for `workMs`, asking `isHeld()`
 * before each write, with the events streamed as they happen (see `HoldCommand`). `told-lost`
 * goes once, for the first of: the signal aborting, `isHeld()` saying false, `run`
 * rejecting with a lost-lock error.
 */
async function hold(lock: PeerLock, store: Store | undefined, command: HoldCommand): Promise<void> {
  const { key, holder } = command;
  const emit = (event: HoldEvent): void => send(event);
  let toldLost = false;
  const tellLost = (how: string): void => {
    if (toldLost) return;
    toldLost = true;
    emit({ type: 'told-lost', holder, at: now(), how });
  };
  let error: string | undefined;
  try {
    if (!store) throw new Error('A hold needs a PostgreSQL to write to: start the worker with args.pg.');
    if (!(command.writeEveryMs > 0)) throw new Error(`A hold's writeEveryMs must be > 0, got ${command.writeEveryMs}.`);
    await lock.run(key, async (held) => {
      const grantedAt = process.hrtime.bigint();
      emit({
        type: 'granted',
        holder,
        at: String(grantedAt),
        ...(held.token === undefined ? {} : { token: String(held.token) }),
      });
      const onAbort = (): void => tellLost(`signal aborted: ${messageOf(held.signal.reason)}`);
      if (held.signal.aborted) onAbort();
      else held.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const endAt = grantedAt + BigInt(command.workMs) * 1_000_000n;
        let stopped = false;
        for (let n = 0; ; n++) {
          const writeAt = grantedAt + BigInt(n * command.writeEveryMs) * 1_000_000n;
          if (writeAt >= endAt) break;
          await until(writeAt);
          if (!held.isHeld()) {
            tellLost('isHeld() returned false');
            emit({ type: 'stopped', holder, at: now() });
            stopped = true;
            break;
          }
          if (held.token !== undefined) {
            const outcome = await write(store, key, `${key}:fenced`, holder, held.token);
            emit({ type: 'write', holder, at: now(), row: 'fenced', outcome });
          }
          const outcome = await write(store, key, `${key}:unfenced`, holder, undefined);
          emit({ type: 'write', holder, at: now(), row: 'unfenced', outcome });
        }
        if (!stopped) await until(endAt);
      } finally {
        held.signal.removeEventListener('abort', onAbort);
        emit({ type: 'releasing', holder, at: now() });
      }
    });
  } catch (caught) {
    error = messageOf(caught);
    if (isLostLockError(caught)) tellLost(`run rejected: ${error}`);
  }
  emit({ type: 'hold-done', holder, at: now(), ...(error === undefined ? {} : { error }) });
}

async function main(): Promise<void> {
  if (!process.send)
    throw new Error('peer.worker.ts runs forked with an IPC channel (see bench/peers/peer-worker.ts).');
  const args = JSON.parse(process.argv[2] ?? '') as PeerWorkerArgs;
  const lock = await openPeer(args.peer);
  let store: Store | undefined;
  if (args.pg) {
    const pool = new Pool({ connectionString: args.pg.url, max: 2 });
    pool.on('error', () => undefined); // a connection the server closed: the pool drops it
    store = { pool, fence: new PgFence(pool, { table: args.pg.fenceTable }), dataTable: args.pg.dataTable };
  }
  const close = async (): Promise<void> => {
    closing = true;
    await Promise.all([lock.close(), store?.pool.end()]);
    send({ type: 'closed' });
    process.disconnect();
  };
  process.on('disconnect', parentGone);
  process.on('message', (command: PeerCommand) => {
    const done =
      command.cmd === 'loop'
        ? loop(lock, command).then(send)
        : command.cmd === 'hold'
          ? hold(lock, store, command)
          : close();
    done.catch(fatal);
  });
  send({ type: 'ready', pid: process.pid });
}

process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);
main().catch(fatal);
