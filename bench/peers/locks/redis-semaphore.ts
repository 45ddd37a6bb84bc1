import { Mutex } from 'redis-semaphore';

import type { PeerConfig, PeerLock } from '../peer-lock.js';
import { oneEndpoint } from './peer-config-error.js';
import { signalHold } from './peer-holds.js';
import { closeIoredis, openIoredis } from './redis-clients.js';

/**
 * redis-semaphore's `Mutex` on one ioredis client, as its README shows: a new `Mutex` per
 * call, `acquire()`, the body, `release()` in `finally`. Set: `lockTimeout` (the TTL; its
 * default 10 s when the config names none), `acquireTimeout`, and `onLockLost`, which
 * aborts the hold's signal (its default throws an unhandled `LostLockError`, ending the
 * process). Its defaults otherwise: retryInterval 10 ms, refresh every 0.8 × lockTimeout.
 * No token. The Redis key is `mutex:<key>` (see lock-keys.ts).
 */
export function openRedisSemaphore(config: PeerConfig): PeerLock {
  const client = openIoredis(config.id, oneEndpoint(config.id, config.endpoints));
  return {
    id: 'redis-semaphore',
    run: async (key, body) => {
      const lost = new AbortController();
      const mutex = new Mutex(client, key, {
        ...(config.ttlMs === undefined ? {} : { lockTimeout: config.ttlMs }),
        acquireTimeout: config.acquireTimeoutMs,
        onLockLost: (error) => lost.abort(error),
      });
      await mutex.acquire();
      try {
        return await body(signalHold(lost.signal));
      } finally {
        await mutex.release();
      }
    },
    close: () => closeIoredis(client),
  };
}
