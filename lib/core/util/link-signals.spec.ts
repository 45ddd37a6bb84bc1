import { getEventListeners } from 'node:events';

import { linkSignals } from './link-signals.js';

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

describe('linkSignals', () => {
  it('aborts the target with the mapped reason when a source aborts', () => {
    const target = new AbortController();
    const source = new AbortController();
    const map = jest.fn((reason: unknown) => ({ wrapped: reason }));
    linkSignals(target, [[source.signal, map]]);
    expect(target.signal.aborted).toBe(false);
    expect(map).not.toHaveBeenCalled();
    source.abort('original');
    expect(map).toHaveBeenCalledWith('original');
    expect(target.signal.aborted).toBe(true);
    expect(target.signal.reason).toEqual({ wrapped: 'original' });
  });

  it('uses the mapper of the source that aborted, and the first abort wins', () => {
    const target = new AbortController();
    const a = new AbortController();
    const b = new AbortController();
    linkSignals(target, [
      [a.signal, (r) => `a:${String(r)}`],
      [b.signal, (r) => `b:${String(r)}`],
    ]);
    b.abort('one');
    a.abort('two');
    expect(target.signal.reason).toBe('b:one');
  });

  it('skips undefined sources', () => {
    const target = new AbortController();
    const source = new AbortController();
    linkSignals(target, [
      [undefined, () => 'never'],
      [source.signal, (r) => r],
    ]);
    expect(target.signal.aborted).toBe(false);
    source.abort('ok');
    expect(target.signal.reason).toBe('ok');
  });

  it('aborts the target at once for a source already aborted, without a listener on it', () => {
    const target = new AbortController();
    const done = AbortSignal.abort('earlier');
    const add = jest.spyOn(done, 'addEventListener');
    linkSignals(target, [[done, (r) => `mapped ${String(r)}`]]);
    expect(target.signal.reason).toBe('mapped earlier');
    expect(add).not.toHaveBeenCalled();
  });

  it('adds one listener per live source', () => {
    const target = new AbortController();
    const a = new AbortController();
    const b = new AbortController();
    linkSignals(target, [
      [a.signal, (r) => r],
      [b.signal, (r) => r],
    ]);
    expect(abortListeners(a.signal)).toBe(1);
    expect(abortListeners(b.signal)).toBe(1);
  });

  it('returns a function that detaches every listener', () => {
    const target = new AbortController();
    const a = new AbortController();
    const b = new AbortController();
    const map = jest.fn((r: unknown) => r);
    const detach = linkSignals(target, [
      [a.signal, map],
      [undefined, map],
      [b.signal, map],
    ]);
    detach();
    expect(abortListeners(a.signal)).toBe(0);
    expect(abortListeners(b.signal)).toBe(0);
    a.abort('after detach');
    b.abort('after detach');
    expect(target.signal.aborted).toBe(false);
    expect(map).not.toHaveBeenCalled();
  });

  it('detaches the remaining listeners after one source aborted', () => {
    const target = new AbortController();
    const a = new AbortController();
    const b = new AbortController();
    const detach = linkSignals(target, [
      [a.signal, (r) => r],
      [b.signal, (r) => r],
    ]);
    a.abort('a');
    expect(abortListeners(a.signal)).toBe(0); // `once` listener
    expect(abortListeners(b.signal)).toBe(1);
    detach();
    expect(abortListeners(b.signal)).toBe(0);
    expect(target.signal.reason).toBe('a');
  });

  it('leaves a long-lived source clean over many link/detach cycles', () => {
    const longLived = new AbortController().signal;
    for (let i = 0; i < 100; i++) linkSignals(new AbortController(), [[longLived, (r) => r]])();
    expect(abortListeners(longLived)).toBe(0);
  });
});
