import { EventEmitter } from 'node:events';

import { LockTimeoutError, LockUnavailableError } from '../../errors/errors.js';
import { blameOutage, ClientOutage } from './client-outage.js';

describe('ClientOutage', () => {
  let client: EventEmitter;
  let outage: ClientOutage;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    client = new EventEmitter();
    outage = new ClientOutage(client);
  });
  afterEach(() => jest.useRealTimers());

  it('is offline until the first connect, then online', () => {
    expect(outage.connected).toBe(false);
    client.emit('connected');
    expect(outage.connected).toBe(true);
  });

  it('names the state and how long it has lasted, from the first disconnect; a loss meanwhile marks it lost, not new', () => {
    client.emit('connected');
    client.emit('disconnected');
    const since = Date.now();
    jest.advanceTimersByTime(1500);
    expect(outage.error('lock "a" (write)')).toMatchObject({
      state: 'disconnected',
      unavailableForMs: 1500,
      unavailableSince: since,
    });
    client.emit('session-lost');
    jest.advanceTimersByTime(500);
    const error = outage.error('locks()');
    expect(error).toBeInstanceOf(LockUnavailableError);
    expect(error).toMatchObject({ state: 'lost', unavailableForMs: 2000, unavailableSince: since });
    expect(error.message).toMatch(/locks\(\) could not be answered: the session was lost .* 2000 ms/);
    client.emit('connected');
    client.emit('disconnected');
    expect(outage.error('x')).toMatchObject({ state: 'disconnected', unavailableForMs: 0 });
    expect(outage.error('x').unavailableSince).toBeGreaterThan(since);
  });

  it('tells whether a time fell in the current or the last outage', () => {
    client.emit('connected');
    const before = performance.now();
    jest.advanceTimersByTime(100);
    client.emit('disconnected');
    jest.advanceTimersByTime(100);
    const during = performance.now();
    jest.advanceTimersByTime(100);
    client.emit('connected');
    jest.advanceTimersByTime(100);
    const after = performance.now();
    expect([before, during, after].map((at) => outage.offlineAt(at))).toEqual([false, true, false]);
    jest.advanceTimersByTime(100);
    client.emit('disconnected');
    expect([during, after, performance.now()].map((at) => outage.offlineAt(at))).toEqual([true, false, true]);
  });

  it('blames the outage only for a wait whose deadline passed while offline', () => {
    client.emit('connected');
    const whileConnected = new LockTimeoutError('a', 'write', 300);
    const atOnce = new LockTimeoutError('a', 'write', 0);
    jest.advanceTimersByTime(10);
    client.emit('disconnected');
    jest.advanceTimersByTime(10);
    const whileAway = new LockTimeoutError('a', 'write', 300);
    expect(blameOutage(outage, whileConnected)).toBe(whileConnected); // a drop after the deadline changes nothing
    expect(blameOutage(outage, atOnce)).toBe(atOnce); // a try that found the lock taken
    expect(blameOutage(outage, whileAway)).toMatchObject({ code: 'LOCK_UNAVAILABLE', state: 'disconnected' });
    expect((blameOutage(outage, whileAway) as Error).message).toMatch(/lock "a" \(write\)/);
    const other = new Error('other');
    expect(blameOutage(outage, other)).toBe(other);
  });
});
