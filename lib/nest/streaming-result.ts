import { WithLockUsageError } from './errors/with-lock-usage.error.js';

/**
 * What a value does after the method that returned it: an Observable runs when subscribed,
 * a `StreamableFile`, a Node or web stream, or any async iterable is read later (by Nest,
 * after the handler resolved). Under a lock decorator that is after the release.
 */
export function streamingKind(value: unknown): string | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const has = (key: string | symbol): boolean => typeof (value as Record<string | symbol, unknown>)[key] === 'function';
  // Pairs of methods, so that a domain object with a `subscribe` or a `pipe` of its own passes.
  if (has('subscribe') && has('pipe')) return 'an Observable';
  if (has('getStream') && has('getHeaders')) return 'a StreamableFile';
  if ((has('pipe') && has('on')) || (has('getReader') && has('pipeTo')) || has(Symbol.asyncIterator)) return 'a stream';
  return undefined;
}

/** Refuses a result that would be consumed after the lock's release (see `streamingKind`). */
export function refuseStreamingResult(decorator: string, method: string, result: unknown): void {
  const kind = streamingKind(result);
  if (!kind) return;
  throw new WithLockUsageError(
    `${decorator} cannot cover ${method}: it returned ${kind}, which is consumed after the method returned, when the lock is already released. Lock inside the producer instead (LockService.withLock around the work that fills it), or collect the values in the method and return them.`,
  );
}
