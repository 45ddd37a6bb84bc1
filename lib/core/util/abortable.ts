/**
 * Races `promise` against signals: rejects with the first aborted signal's reason. The
 * listeners are removed however it ends, so a long-lived signal collects nothing.
 */
export function abortable<T>(promise: Promise<T>, signals: readonly AbortSignal[]): Promise<T> {
  const aborted = signals.find((s) => s.aborted);
  if (aborted) {
    promise.catch(() => undefined);
    return Promise.reject(aborted.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (event: Event): void => {
      cleanup();
      promise.catch(() => undefined);
      reject((event.target as AbortSignal).reason);
    };
    const cleanup = (): void => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
    };
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}
