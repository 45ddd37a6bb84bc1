import type { EventEmitter } from 'node:events';

/**
 * Aborts when, for `ms` from now, every TCP connection attempt failed with ECONNREFUSED
 * and none was accepted: nothing listens at the address, and waiting the whole connect
 * timeout for it would only delay the error (jest's 5 s hook timeout would fire first).
 * A server that accepts TCP (even one that then stays silent), or attempts that get no
 * answer at all (a black hole), never trigger it: the connect timeout covers those.
 */
export function refusedConnectWatch(
  session: EventEmitter,
  ms: number,
  reason: () => Error,
): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const startedAt = performance.now();
  let refused = false;
  let accepted = false;
  const check = (): void => {
    if (refused && !accepted && performance.now() - startedAt >= ms) abort();
  };
  const onFailed = (error: NodeJS.ErrnoException): void => {
    if (error?.code === 'ECONNREFUSED') refused = true;
    check();
  };
  const onAccepted = (): void => {
    accepted = true;
  };
  const timer = setTimeout(check, ms);
  const clear = (): void => {
    clearTimeout(timer);
    session.removeListener('tcp-failed', onFailed);
    session.removeListener('tcp-accepted', onAccepted);
  };
  const abort = (): void => {
    clear();
    controller.abort(reason());
  };
  session.on('tcp-failed', onFailed);
  session.on('tcp-accepted', onAccepted);
  return { signal: controller.signal, clear };
}
