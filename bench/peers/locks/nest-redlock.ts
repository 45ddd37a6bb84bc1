import 'reflect-metadata';

import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redlock, RedlockModule } from '@anchan828/nest-redlock';

import type { PeerConfig, PeerHold, PeerLock } from '../peer-lock.js';
import { oneEndpoint } from './peer-config-error.js';
import { neverToldHold } from './peer-holds.js';
import { closeIoredis, openIoredis } from './redis-clients.js';
import { REDLOCK_RETRY_DELAY_MS, redlockRetryCount } from './redlock-retries.js';

/** The body a call runs, as the decorated method receives it. */
type Body = (hold: PeerHold) => Promise<unknown>;

/**
 * The service a Nest user writes: a method decorated `@Redlock(keyFunction)`, its lock key
 * taken from its first argument, as the README's "Define complex resources" shows. The
 * decorator runs it inside node-redlock's `using` (auto-extended), but hands it no signal:
 * it only checks the signal once, before the method starts. So the hold never tells:
 * `isHeld()` is always true and its signal never aborts, even when an extension failed.
 */
@Injectable()
class NestRedlockPeerService {
  @Redlock<NestRedlockPeerService['run']>((_target: NestRedlockPeerService, key: string) => key)
  async run(_key: string, body: Body): Promise<unknown> {
    return body(neverToldHold());
  }
}

/**
 * `@anchan828/nest-redlock` (node-redlock 5 beta under it) in a real Nest application
 * context: `RedlockModule.register` with one ioredis client and the README's settings
 * (driftFactor 0.01, retryDelay 200, retryJitter 200, automaticExtensionThreshold 500),
 * `retryCount` set from `acquireTimeoutMs`, and `duration` the config's TTL (the module's
 * default 5 s when none). `run` calls the decorated method. The Redis key is the lock key.
 * (Its `RedlockService.using` does hand a routine the signal, as node-redlock's does; the
 * decorator, what Nest users write, does not.)
 */
export async function openNestRedlock(config: PeerConfig): Promise<PeerLock> {
  const client = openIoredis(config.id, oneEndpoint(config.id, config.endpoints));
  @Module({
    imports: [
      RedlockModule.register({
        clients: [client],
        settings: {
          driftFactor: 0.01,
          retryCount: redlockRetryCount(config.acquireTimeoutMs),
          retryDelay: REDLOCK_RETRY_DELAY_MS,
          retryJitter: 200,
          automaticExtensionThreshold: 500,
        },
        ...(config.ttlMs === undefined ? {} : { duration: config.ttlMs }),
      }),
    ],
    providers: [NestRedlockPeerService],
  })
  class NestRedlockPeerModule {}

  const app = await NestFactory.createApplicationContext(NestRedlockPeerModule, { logger: false }).catch(
    async (error: unknown) => {
      await closeIoredis(client);
      throw error;
    },
  );
  const service = app.get(NestRedlockPeerService);
  return {
    id: 'nest-redlock',
    run: <T>(key: string, body: (hold: PeerHold) => Promise<T>) => service.run(key, body) as Promise<T>,
    close: () => app.close(), // RedlockModule closes its clients on shutdown (QUIT, or at once when not connected)
  };
}
