import type { ZkSession, ZkWatchListener } from '../session/zk-session.js';
import { Stop } from '../../util/stop.js';
import { waitForChange } from './acquisition.js';

/** The part of a session `waitForChange` uses, driven by hand. */
class FakeSession {
  isLost = false;
  readonly listeners = new Map<string, ZkWatchListener>();
  /** What `watchData` answers: the node exists (true) or not. */
  exists = true;

  watchData(path: string, listener: ZkWatchListener): Promise<boolean> {
    if (this.exists) this.listeners.set(path, listener);
    return Promise.resolve(this.exists);
  }

  unwatch(path: string, listener: ZkWatchListener): void {
    if (this.listeners.get(path) === listener) this.listeners.delete(path);
  }

  fire(path: string, type = 'NODE_DELETED'): void {
    this.listeners.get(path)?.({ type, path });
  }

  get session(): ZkSession {
    return this as unknown as ZkSession;
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('waitForChange', () => {
  it('sends the next request from inside the notification, and hands it over unawaited', async () => {
    const fake = new FakeSession();
    const order: string[] = [];
    let answer!: (value: string) => void;
    const next = jest.fn(() => {
      order.push('sent');
      return new Promise<string>((resolve) => (answer = resolve));
    });
    const waiting = waitForChange(fake.session, '/d/blocker', new Stop(), next);
    await flush();
    expect(next).not.toHaveBeenCalled();

    fake.fire('/d/blocker');
    order.push('after fire');
    expect(order).toEqual(['sent', 'after fire']); // synchronous, in the listener

    // Resolves before the request is answered: the request itself is returned, boxed.
    const { sent } = await waiting;
    expect(sent).toBeInstanceOf(Promise);
    answer('listing');
    await expect(sent).resolves.toBe('listing');
    expect(fake.listeners.size).toBe(0);
  });

  it('sends nothing when the node is gone already', async () => {
    const fake = new FakeSession();
    fake.exists = false;
    const next = jest.fn(() => Promise.resolve('x'));
    await expect(waitForChange(fake.session, '/d/gone', new Stop(), next)).resolves.toEqual({});
    expect(next).not.toHaveBeenCalled();
  });

  it('sends nothing when the wake-up is the session being lost', async () => {
    const fake = new FakeSession();
    const next = jest.fn(() => Promise.resolve('x'));
    const waiting = waitForChange(fake.session, '/d/blocker', new Stop(), next);
    await flush();
    fake.isLost = true;
    fake.fire('/d/blocker', 'SESSION_LOST');
    await expect(waiting).resolves.toEqual({ sent: undefined });
    expect(next).not.toHaveBeenCalled();
  });

  it('rejects with the stop reason and drops the listener when stopped first', async () => {
    const fake = new FakeSession();
    const stop = new Stop();
    const next = jest.fn(() => Promise.resolve('x'));
    const waiting = waitForChange(fake.session, '/d/blocker', stop, next);
    await flush();
    stop.stop(new Error('timed out'));
    await expect(waiting).rejects.toThrow('timed out');
    expect(fake.listeners.size).toBe(0);
    expect(next).not.toHaveBeenCalled();
  });

  it('a request that fails after the waiter stopped raises no unhandled rejection', async () => {
    const fake = new FakeSession();
    const stop = new Stop();
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      let fail!: (error: Error) => void;
      const next = (): Promise<string> => new Promise<string>((_, reject) => (fail = reject));
      const waiting = waitForChange(fake.session, '/d/blocker', stop, next);
      await flush();
      fake.fire('/d/blocker');
      stop.stop(new Error('stopped')); // the caller gives up and never takes the request
      await waiting.catch(() => undefined);
      fail(new Error('connection loss'));
      await flush();
      await flush();
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
