import { Redlock } from '@sesamecare-oss/redlock';

import type { PeerConfig, PeerLock } from '../peer-lock.js';
import { PeerConfigError } from './peer-config-error.js';
import { signalHold } from './peer-holds.js';
import { closeIoredis, openIoredis } from './redis-clients.js';
import { redlockRetryCount } from './redlock-retries.js';

/** The lock's duration when the config names none: redlock has no default (its README's examples use 5 s). */
export const REDLOCK_DEFAULT_TTL_MS = 10_000;

/**
 * `@sesamecare-oss/redlock` (node-redlock's maintained TypeScript fork), as its README
 * shows: one ioredis client per independent Redis server (one for `redlock-1`, three for
 * `redlock-3`: a majority must agree), and `redlock.using([key], duration, settings,
 * routine)`, which extends the lock while the routine runs and aborts the routine's signal
 * when an extension fails. Only `retryCount` is set (from `acquireTimeoutMs`); the rest is
 * the library's defaults: retryDelay 200 ms, retryJitter 100 ms (its README's example shows
 * 200), driftFactor 0.01, extension 500 ms before expiry. No token: `isHeld` is the signal.
 * The Redis key is the lock key itself.
 */
export function openRedlock(config: PeerConfig): PeerLock {
  const servers = config.id === 'redlock-3' ? 3 : 1;
  if (config.endpoints.length !== servers)
    throw new PeerConfigError(config.id, `it takes ${servers} Redis server(s), got ${config.endpoints.length}.`);
  const clients = config.endpoints.map((endpoint) => openIoredis(config.id, endpoint));
  const redlock = new Redlock(clients);
  const duration = config.ttlMs ?? REDLOCK_DEFAULT_TTL_MS;
  const settings = { retryCount: redlockRetryCount(config.acquireTimeoutMs) };
  return {
    id: config.id,
    run: (key, body) => redlock.using([key], duration, settings, (signal) => body(signalHold(signal))),
    close: async () => {
      await Promise.all(clients.map(closeIoredis));
    },
  };
}
