import 'reflect-metadata';

import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MurLock, MurLockModule, MurLockService } from 'murlock';

import type { PeerConfig, PeerHold, PeerLock } from '../peer-lock.js';
import { oneEndpoint } from './peer-config-error.js';
import { neverToldHold } from './peer-holds.js';
import { parseEndpoint } from './redis-clients.js';

/** The lock's release time when the config names none: murlock has no default (its README's examples use 5 s). */
export const MURLOCK_DEFAULT_TTL_MS = 5_000;

/**
 * murlock's `wait`: it sleeps `wait × n` after its n-th failed try (a linear back-off). 200 ms,
 * redlock's default delay, so that both kinds of polling lock take their first retry
 * alike; the README's example (1000 ms) would make every contended grant wait a second.
 */
export const MURLOCK_WAIT_MS = 200;

/**
 * murlock's `maxAttempts` for a call that may wait `acquireTimeoutMs`: after n failed tries
 * it has slept `wait × n(n+1)/2` (it sleeps after the last failed try too, then gives up),
 * so the most tries whose sleeps fit in the time, and one at least.
 */
export function murlockMaxAttempts(acquireTimeoutMs: number, waitMs = MURLOCK_WAIT_MS): number {
  let attempts = 1;
  while ((waitMs * (attempts + 1) * (attempts + 2)) / 2 <= acquireTimeoutMs) attempts++;
  return attempts;
}

/** The body a call runs, as the decorated method receives it. */
type Body = (hold: PeerHold) => Promise<unknown>;

/**
 * The service a Nest user writes: a method decorated `@MurLock(releaseTime, 'key')`, the
 * lock key taken from its `key` argument. A class per config, since the release time is
 * the decorator's argument. murlock sets a key with that TTL and never extends it nor tells
 * the holder: `isHeld()` is always true and the signal never aborts.
 */
function peerService(releaseTimeMs: number) {
  // Named MURLOCK_SERVICE_NAME (lock-keys.ts): murlock's lock keys begin with it.
  @Injectable()
  class MurlockPeerService {
    @MurLock(releaseTimeMs, 'key')
    async run(key: string, body: Body): Promise<unknown> {
      void key; // only murlock reads it, for the lock key
      return body(neverToldHold());
    }
  }
  return MurlockPeerService;
}

/**
 * murlock in a real Nest application context: `MurLockModule.forRoot` as the README shows
 * (its `redis` 4 client on the config's server; `ignoreUnlockFail: false`,
 * `failFastOnRedisError: false`, `blocking: false`, as there), `wait` and `maxAttempts`
 * from `acquireTimeoutMs` (above), `logLevel: 'error'` (its quietest that works: 'none'
 * logs everything, see the report), and the service's decorated method. Its lock key in
 * Redis is `MurlockPeerService:run:<key>` (the default `lockKeyPrefix`; see lock-keys.ts).
 */
export async function openMurlock(config: PeerConfig): Promise<PeerLock> {
  const { host, port } = parseEndpoint(config.id, oneEndpoint(config.id, config.endpoints));
  const Service = peerService(config.ttlMs ?? MURLOCK_DEFAULT_TTL_MS);
  @Module({
    imports: [
      MurLockModule.forRoot({
        redisOptions: { url: `redis://${host}:${port}` },
        wait: MURLOCK_WAIT_MS,
        maxAttempts: murlockMaxAttempts(config.acquireTimeoutMs),
        logLevel: 'error',
        ignoreUnlockFail: false,
        failFastOnRedisError: false,
        blocking: false,
      }),
    ],
    providers: [Service],
  })
  class MurlockPeerModule {}

  const app = await NestFactory.createApplicationContext(MurlockPeerModule, { logger: false });
  const service = app.get(Service);
  return {
    id: 'murlock',
    run: <T>(key: string, body: (hold: PeerHold) => Promise<T>) => service.run(key, body) as Promise<T>,
    close: async () => {
      // Its shutdown QUITs a client that is open; one reconnecting would wait for the
      // server to come back: it is closed at once instead.
      const { redisClient } = app.get(MurLockService) as unknown as {
        redisClient?: { isReady: boolean; isOpen: boolean; disconnect(): Promise<void> };
      };
      if (redisClient?.isOpen && !redisClient.isReady) await redisClient.disconnect().catch(() => undefined);
      await app.close();
    },
  };
}
