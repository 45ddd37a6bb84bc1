import type { EventEmitter } from 'node:events';

import { abortable } from '../../util/abortable.js';

/** A session as its connection waits see it: its state, its loss signal and its `connected`/`disconnected` events. */
export interface ConnectionEvents extends Pick<EventEmitter, 'once' | 'removeListener'> {
  readonly isConnected: boolean;
  readonly signal: AbortSignal;
}

/** Resolves once `session` is connected; rejects if it is lost or `stop` aborts first. */
export function whenConnected(session: ConnectionEvents, stop?: AbortSignal): Promise<void> {
  return whenSo(session, () => session.isConnected, 'connected', stop);
}

/** Resolves once `isSo()`, checked now and on each `event`; rejects if `session` is lost or `stop` aborts first. */
export async function whenSo(
  session: ConnectionEvents,
  isSo: () => boolean,
  event: string,
  stop?: AbortSignal,
): Promise<void> {
  if (session.signal.aborted) throw session.signal.reason;
  if (isSo()) return;
  let onEvent!: () => void;
  const happened = new Promise<void>((resolve) => session.once(event, (onEvent = resolve)));
  try {
    await abortable(happened, stop ? [stop, session.signal] : [session.signal]);
  } finally {
    session.removeListener(event, onEvent);
  }
}

/**
 * Waits for `work` only while `session` is connected: resolves when it settles, or as soon
 * as the connection drops (the work may go on in the background). Never rejects.
 */
export async function whileConnected(session: ConnectionEvents, work: Promise<unknown>): Promise<void> {
  if (!session.isConnected) return;
  let stop!: () => void;
  const interrupted = new Promise<void>((resolve) => (stop = resolve));
  session.once('disconnected', stop);
  session.signal.addEventListener('abort', stop, { once: true });
  try {
    await Promise.race([work.catch(() => undefined), interrupted]);
  } finally {
    session.removeListener('disconnected', stop);
    session.signal.removeEventListener('abort', stop);
  }
}

/**
 * For a call that must answer at once (a try): calls `onOffline` now if `session` is not
 * connected, else as soon as its connection drops or it is lost, while a request of the
 * call may be queued in the client until a reconnect. Returns the unsubscribe.
 */
export function whenOffline(session: ConnectionEvents, onOffline: () => void): () => void {
  if (!session.isConnected || session.signal.aborted) {
    onOffline();
    return () => undefined;
  }
  session.once('disconnected', onOffline);
  session.signal.addEventListener('abort', onOffline, { once: true });
  return () => {
    session.removeListener('disconnected', onOffline);
    session.signal.removeEventListener('abort', onOffline);
  };
}
