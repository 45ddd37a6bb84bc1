import type { EventEmitter } from 'node:events';

import {
  LockTimeoutError,
  LockUnavailableError,
  type UnavailableState,
  ZkSessionLostError,
} from '../../errors/errors.js';
import { lockMessages } from '../../errors/messages.js';
import { abortable } from '../../util/abortable.js';
import { longTimeout } from '../../util/long-timeout.js';
import type { Stop } from '../../util/stop.js';
import { isZkCode } from './zk-error-code.js';
import { whenOffline, type ConnectionEvents } from './connection-waits.js';
import type { ZkSession } from './zk-session.js';

/**
 * Since when a `ZkClient` has had no connected session, from its own events: a
 * disconnect starts an outage, a lost session marks it (a new session has to connect,
 * not the old one to re-attach), and a connect ends it. A session lost during an outage
 * does not start another: the outage is the time without a connection, whatever session.
 */
export class ClientOutage {
  /** `performance.now()` and `Date.now()` at its start; undefined while a session is connected. */
  private startedAt: { readonly mono: number; readonly wall: number } | undefined;
  private sessionLost = false;
  private everConnected = false;
  /** The last outage that ended (`performance.now()` times). */
  private last: { readonly from: number; readonly to: number } | undefined;

  constructor(client: Pick<EventEmitter, 'on'>) {
    this.begin(); // nothing is connected before the first connect
    client.on('connected', () => {
      if (this.startedAt) this.last = { from: this.startedAt.mono, to: performance.now() };
      this.startedAt = undefined;
      this.sessionLost = false;
      this.everConnected = true;
    });
    client.on('disconnected', () => this.begin());
    client.on('session-lost', () => {
      this.begin();
      this.sessionLost = true;
    });
  }

  /** Whether a session is connected now. */
  get connected(): boolean {
    return this.startedAt === undefined;
  }

  /**
   * Whether no session was connected at `at` (`performance.now()` time, in the current or
   * the last outage): a wait that gave up then may since have met a drop of its own.
   */
  offlineAt(at: number): boolean {
    const inLast = this.last !== undefined && this.last.from <= at && at < this.last.to;
    return inLast || (this.startedAt !== undefined && this.startedAt.mono <= at);
  }

  /**
   * The error a call gives up with for want of a connected session, naming the client's
   * state and how long it has lasted. `subject`: what could not be answered.
   */
  error(subject: string): LockUnavailableError {
    const now = performance.now();
    const { mono, wall } = this.startedAt ?? { mono: now, wall: Date.now() };
    const state: UnavailableState = this.sessionLost ? 'lost' : 'disconnected';
    return new LockUnavailableError(subject, state, Math.round(now - mono), wall, !this.everConnected);
  }

  private begin(): void {
    this.startedAt ??= { mono: performance.now(), wall: Date.now() };
  }
}

/**
 * Makes a try (a call that must answer at once) answer while no session is connected:
 * stops `stop` with `outage`'s error for `subject` now if `session` is not connected
 * (and throws it), else as soon as its connection drops or it is lost, instead of leaving
 * the try's requests queued in the client until a reconnect. Returns the unsubscribe.
 */
export function answerAtOnce(outage: ClientOutage, session: ConnectionEvents, stop: Stop, subject: string): () => void {
  const unsubscribe = whenOffline(session, () => stop.stop(outage.error(subject)));
  if (stop.isStopped) {
    unsubscribe();
    stop.throwIfStopped();
  }
  return unsubscribe;
}

/**
 * A wait whose deadline passed while no session was connected (then: not when the error
 * arrives, after a cleanup that may have met a drop of its own) was not kept out by a
 * holder: nobody could be asked. Its `LockTimeoutError` becomes the outage's
 * `LockUnavailableError`; any other outcome stays as it is.
 */
export function blameOutage(outage: ClientOutage, error: unknown): unknown {
  if (!(error instanceof LockTimeoutError) || error.timeoutMs === 0 || !outage.offlineAt(error.at)) return error;
  return outage.error(lockMessages.lockSubject(error.lockName, error.mode));
}

/** What `onConnectedSession` needs of a `ZkClient`. */
export interface OutageClient {
  readonly outage: ClientOutage;
  readonly session: ZkSession;
  liveSession(): ZkSession;
}

/**
 * Runs `work` on a connected session of `client`, for a read or a write that may be
 * repeated: waits for a connection, runs `work` again after a connection loss, and in the
 * next session after a lost one. Rejects with `LockUnavailableError` for `subject` once
 * `timeoutMs` has passed with no session connected (at the deadline, or at the first drop
 * after it while `work` is still answered late on a connected session).
 */
export async function onConnectedSession<T>(
  client: OutageClient,
  timeoutMs: number,
  subject: string,
  work: (session: ZkSession) => Promise<T>,
): Promise<T> {
  const expired = outageDeadline(client, timeoutMs, subject);
  try {
    for (;;) {
      const session = client.liveSession();
      try {
        await session.whenConnected(expired.signal);
        return await abortable(work(session), [expired.signal]);
      } catch (error) {
        if (expired.signal.aborted) throw expired.signal.reason;
        // Lost and replaced by a new session: `work` runs again there.
        const replaced = error instanceof ZkSessionLostError && client.session !== session;
        if (!replaced && !isZkCode(error, 'CONNECTION_LOSS')) throw error;
      }
    }
  } finally {
    expired.clear();
  }
}

/**
 * `work`, or `LockUnavailableError` for `subject` once `timeoutMs` has passed with no
 * session connected (as `onConnectedSession` says), whether or not a session connects
 * meanwhile: for what settles on its own (the confirmations of releases).
 */
export async function withinOutage<T>(
  client: OutageClient,
  timeoutMs: number,
  subject: string,
  work: Promise<T>,
): Promise<T> {
  const expired = outageDeadline(client, timeoutMs, subject);
  try {
    return await abortable(work, [expired.signal]);
  } finally {
    expired.clear();
  }
}

/**
 * Aborts with `outage`'s `LockUnavailableError` for `subject` once `timeoutMs` has passed
 * with no session connected: at the deadline, or at the first drop after it.
 */
function outageDeadline(
  client: OutageClient,
  timeoutMs: number,
  subject: string,
): { readonly signal: AbortSignal; clear(): void } {
  const expired = new AbortController();
  const giveUp = (): void => expired.abort(client.outage.error(subject));
  let unwatch: (() => void) | undefined;
  const timer = longTimeout(() => {
    if (client.outage.connected) unwatch = whenOffline(client.session, giveUp);
    else giveUp();
  }, timeoutMs);
  return {
    signal: expired.signal,
    clear: () => {
      timer.clear();
      unwatch?.();
    },
  };
}
