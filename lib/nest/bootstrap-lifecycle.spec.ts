import type { LockBackend } from '../core/port/lock-backend.js';
import { BootstrapLifecycle } from './bootstrap-lifecycle.js';

/** A backend whose connection the test settles by hand, counting the attempts. */
function backend(): { backend: LockBackend; starts: () => number; settle: (error?: Error) => void } {
  let starts = 0;
  let settle: (error?: Error) => void = () => undefined;
  const connecting = new Promise<void>((resolve, reject) => {
    settle = (error) => (error ? reject(error) : resolve());
  });
  const fake = {
    start: () => {
      starts++;
      return connecting;
    },
  };
  return { backend: fake as unknown as LockBackend, starts: () => starts, settle: (error) => settle(error) };
}

describe('BootstrapLifecycle: when members joined before bootstrap start, and when not', () => {
  it('connects, then runs: the members start', async () => {
    const { backend: b, starts, settle } = backend();
    const lifecycle = new BootstrapLifecycle(b);
    const started = lifecycle.bootstrap(true);
    expect(lifecycle.running).toBe(false); // not before the connection
    settle();
    expect(await started).toBe(true);
    expect([lifecycle.running, lifecycle.closed, starts()]).toEqual([true, false, 1]);
    expect(await lifecycle.bootstrap(true)).toBe(false); // once only
  });

  it('with no member waiting, runs without connecting', async () => {
    const { backend: b, starts } = backend();
    const lifecycle = new BootstrapLifecycle(b);
    expect(await lifecycle.bootstrap(false)).toBe(true);
    expect([lifecycle.running, starts()]).toEqual([true, 0]);
  });

  it('shut down while connecting: never runs, and nothing starts', async () => {
    const { backend: b, settle } = backend();
    const lifecycle = new BootstrapLifecycle(b);
    const started = lifecycle.bootstrap(true);
    lifecycle.shutdown();
    settle();
    expect(await started).toBe(false);
    expect([lifecycle.running, lifecycle.closed]).toEqual([false, true]);
  });

  it('a connection that failed closes it, and leaves the error to LockService', async () => {
    const { backend: b, settle } = backend();
    const lifecycle = new BootstrapLifecycle(b);
    const started = lifecycle.bootstrap(true);
    settle(new Error('no server answered'));
    expect(await started).toBe(false);
    expect(lifecycle.closed).toBe(true);
  });
});
