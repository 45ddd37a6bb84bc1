import { getEventListeners } from 'node:events';

import { abortable } from './abortable.js';

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('abortable', () => {
  it('resolves with the promise’s value', async () => {
    const a = new AbortController();
    await expect(abortable(Promise.resolve(42), [a.signal])).resolves.toBe(42);
  });

  it('rejects with the promise’s error', async () => {
    const a = new AbortController();
    const error = new Error('boom');
    await expect(abortable(Promise.reject(error), [a.signal])).rejects.toBe(error);
  });

  it('works with no signals at all', async () => {
    await expect(abortable(Promise.resolve('x'), [])).resolves.toBe('x');
  });

  it('rejects with the reason of the signal that aborts while waiting', async () => {
    const a = new AbortController();
    const pending = deferred<string>();
    const result = abortable(pending.promise, [a.signal]);
    const reason = new Error('stop');
    a.abort(reason);
    await expect(result).rejects.toBe(reason);
  });

  it('rejects with the FIRST aborted signal’s reason, whatever its place in the list', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const c = new AbortController();
    const result = abortable(deferred<void>().promise, [a.signal, b.signal, c.signal]);
    c.abort('reason c');
    a.abort('reason a');
    b.abort('reason b');
    await expect(result).rejects.toBe('reason c');
  });

  it('ignores a resolution that comes after the abort', async () => {
    const a = new AbortController();
    const pending = deferred<string>();
    const result = abortable(pending.promise, [a.signal]);
    a.abort('aborted');
    pending.resolve('too late');
    await expect(result).rejects.toBe('aborted');
  });

  it('ignores an abort that comes after the promise settled', async () => {
    const a = new AbortController();
    const pending = deferred<string>();
    const result = abortable(pending.promise, [a.signal]);
    pending.resolve('done');
    await flush();
    a.abort('too late');
    await expect(result).resolves.toBe('done');
  });

  it('handles a later rejection of the abandoned promise (no unhandled rejection)', async () => {
    // Jest fails the test on an unhandled rejection.
    const a = new AbortController();
    const pending = deferred<string>();
    const result = abortable(pending.promise, [a.signal]);
    a.abort('aborted');
    pending.reject(new Error('abandoned'));
    await expect(result).rejects.toBe('aborted');
    await flush();
  });

  describe('with a signal already aborted', () => {
    it('rejects at once with its reason, without waiting for the promise', async () => {
      const reason = new Error('already');
      const result = abortable(deferred<void>().promise, [new AbortController().signal, AbortSignal.abort(reason)]);
      await expect(result).rejects.toBe(reason);
    });

    it('does not add any listener', async () => {
      const live = new AbortController().signal;
      const add = jest.spyOn(live, 'addEventListener');
      await expect(abortable(deferred<void>().promise, [live, AbortSignal.abort('x')])).rejects.toBe('x');
      expect(add).not.toHaveBeenCalled();
      expect(abortListeners(live)).toBe(0);
    });

    it('handles a later rejection of the abandoned promise (no unhandled rejection)', async () => {
      const pending = deferred<void>();
      const result = abortable(pending.promise, [AbortSignal.abort('x')]);
      pending.reject(new Error('abandoned'));
      await expect(result).rejects.toBe('x');
      await flush();
    });
  });

  describe('listener cleanup', () => {
    it('removes its listeners once the promise resolves', async () => {
      const a = new AbortController();
      const b = new AbortController();
      const pending = deferred<number>();
      const result = abortable(pending.promise, [a.signal, b.signal]);
      expect(abortListeners(a.signal)).toBe(1);
      expect(abortListeners(b.signal)).toBe(1);
      pending.resolve(1);
      await result;
      expect(abortListeners(a.signal)).toBe(0);
      expect(abortListeners(b.signal)).toBe(0);
    });

    it('removes its listeners once the promise rejects', async () => {
      const a = new AbortController();
      const pending = deferred<number>();
      const result = abortable(pending.promise, [a.signal]);
      pending.reject(new Error('no'));
      await expect(result).rejects.toThrow('no');
      expect(abortListeners(a.signal)).toBe(0);
    });

    it('removes its listeners from the other signals when one aborts', async () => {
      const a = new AbortController();
      const b = new AbortController();
      const result = abortable(deferred<void>().promise, [a.signal, b.signal]);
      a.abort('a');
      await expect(result).rejects.toBe('a');
      expect(abortListeners(a.signal)).toBe(0);
      expect(abortListeners(b.signal)).toBe(0);
    });

    it('does not grow the listener count of a long-lived signal over many calls', async () => {
      const longLived = new AbortController().signal;
      const add = jest.spyOn(longLived, 'addEventListener');
      const remove = jest.spyOn(longLived, 'removeEventListener');
      for (let i = 0; i < 100; i++) {
        const abort = new AbortController();
        const pending = deferred<number>();
        const result = abortable(pending.promise, [longLived, abort.signal]);
        if (i % 2 === 0) pending.resolve(i);
        else abort.abort('cancelled');
        await result.catch(() => undefined);
      }
      expect(add).toHaveBeenCalledTimes(100);
      expect(remove).toHaveBeenCalledTimes(100);
      // Each removal was of the very listener that was added.
      add.mock.calls.forEach((call, i) => expect(remove.mock.calls[i][1]).toBe(call[1]));
      expect(abortListeners(longLived)).toBe(0);
    });
  });
});
