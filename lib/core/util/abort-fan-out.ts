/**
 * `count` signals that abort with `signal`, by one listener on it: what several
 * operations at once listen to, instead of one listener each on the shared signal (which
 * Node reports as a `MaxListenersExceededWarning` from the eleventh on). `dispose()`
 * removes the listener once the operations have settled.
 */
export function fanOutAbort(signal: AbortSignal, count: number): { signals: AbortSignal[]; dispose(): void } {
  const controllers = Array.from({ length: count }, () => new AbortController());
  const onAbort = (): void => {
    for (const controller of controllers) controller.abort(signal.reason);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    signals: controllers.map((controller) => controller.signal),
    dispose: () => signal.removeEventListener('abort', onAbort),
  };
}
