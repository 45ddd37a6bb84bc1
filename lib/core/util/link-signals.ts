/**
 * Aborts `target` when any source signal aborts, with the reason `mapReason` gives for it.
 * Returns a function that detaches every listener.
 */
export function linkSignals(
  target: AbortController,
  sources: ReadonlyArray<readonly [AbortSignal | undefined, (reason: unknown) => unknown]>,
): () => void {
  const detach: Array<() => void> = [];
  for (const [signal, mapReason] of sources) {
    if (!signal) continue;
    if (signal.aborted) {
      target.abort(mapReason(signal.reason));
      continue;
    }
    const onAbort = (): void => target.abort(mapReason(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    detach.push(() => signal.removeEventListener('abort', onAbort));
  }
  return () => detach.forEach((fn) => fn());
}
