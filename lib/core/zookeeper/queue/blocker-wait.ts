import type { ZkSession, ZkWatchListener } from '../session/zk-session.js';
import type { Stop } from '../../util/stop.js';

/**
 * Waits for `path` (the one node a waiter queues behind: no herd) to change or go; a lost
 * session wakes every watch listener, ending this too.
 *
 * `next`, the request the waiter sends once woken (its read of the queue), is sent from
 * the notification itself, in the tick that delivers it, as a plain-callback client would:
 * going through the promise chain first costs several turns before the write, on the
 * critical path of every handoff. Resolves with that request in `sent` (boxed, so that it
 * is not awaited here), or without it when nothing was sent (the node was gone already, or
 * the session is lost): the caller then sends its own. The request's rejection is the
 * caller's to handle when it takes it.
 */
export async function waitForChange<T>(
  session: ZkSession,
  path: string,
  stop: Stop,
  next?: () => Promise<T>,
): Promise<{ readonly sent?: Promise<T> }> {
  let sent: Promise<T> | undefined;
  let listener!: ZkWatchListener;
  const fired = new Promise<void>(
    (resolve) =>
      (listener = () => {
        if (next && !session.isLost && !stop.isStopped) {
          sent = next();
          sent.catch(() => undefined); // taken by the caller; never an unhandled rejection if it stopped
        }
        resolve();
      }),
  );
  try {
    if (!(await stop.race(session.watchData(path, listener)))) return {};
    await stop.race(fired);
    return { sent };
  } finally {
    session.unwatch(path, listener);
  }
}
