import { ZkOperationError } from '../../errors/errors.js';
import { zkErrorName } from './zk-error-code.js';
import type { InflightRequests } from './inflight-requests.js';
import type { SessionLiveness } from './session-liveness.js';

/** Requests the leader must commit: only their answers prove the session's life (see SessionLiveness). */
const WRITE_OPS: ReadonlySet<string> = new Set(['create', 'remove', 'heartbeat', 'setData', 'multi']);

/** What a request needs of its session. */
export interface CallContext {
  readonly counter: ZkRequestCounter;
  readonly inflight: InflightRequests;
  readonly liveness: Pick<SessionLiveness, 'writeSent' | 'answered'>;
  /** The loss the session met, if it is lost (then requests fail with it). */
  lostReason(): Error | undefined;
  /** The server said the session expired. */
  expired(): void;
}

export type Invoke = (callback: (error: Error | null, ...results: unknown[]) => void) => void;

/**
 * Sends one request through `invoke` and answers its results, tracked while in flight:
 * every answer (success or a ZooKeeper error) counts as the server's life; a connection
 * loss or expiry does not. Fails with the session's loss once the session is lost, even if
 * the client never calls back.
 */
export function sessionCall<T extends unknown[]>(
  ctx: CallContext,
  op: string,
  path: string,
  invoke: Invoke,
  /** Whether the leader must commit it; by default, as `op` says (the heartbeat is a read while idle). */
  write = WRITE_OPS.has(op),
): Promise<T> {
  const lost = ctx.lostReason();
  if (lost) throw lost;
  ctx.counter.count(op, write);
  return new Promise<T>((resolve, reject) => {
    const sentAt = performance.now();
    const fail = (error: Error): void => {
      ctx.inflight.settle(fail);
      reject(error);
    };
    ctx.inflight.add({ op, path, sentAt, write }, fail);
    if (write) ctx.liveness.writeSent(sentAt);
    invoke((error, ...results) => {
      if (!ctx.inflight.settle(fail)) return; // already failed: the session was lost, or the server left
      const zkCode = error ? zkErrorName(error) : undefined;
      if (zkCode !== 'CONNECTION_LOSS' && zkCode !== 'SESSION_EXPIRED') ctx.liveness.answered(sentAt, write);
      if (!error) return resolve(results as T);
      if (zkCode === 'SESSION_EXPIRED') ctx.expired();
      reject(ctx.lostReason() ?? new ZkOperationError(op, path, zkCode!, error));
    });
  });
}

/**
 * ZooKeeper requests sent, by operation, plus the watch notifications received
 * (`notification`): shows where every round trip goes.
 */
export class ZkRequestCounter {
  private readonly counts = new Map<string, number>();
  private writes = 0;

  /** `write`: the leader must commit it (the `heartbeat` op is a write while something is held, a read otherwise). */
  count(op: string, write = false): void {
    this.counts.set(op, (this.counts.get(op) ?? 0) + 1);
    if (write) this.writes++;
  }

  /** Of the requests counted, those the leader must commit: what this client asked the ensemble to write. */
  writesSent(): number {
    return this.writes;
  }

  /** A copy of the counts so far, e.g. `{ create: 3, getChildren: 4, remove: 3 }`. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }
}
