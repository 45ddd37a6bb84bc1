import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';

import type { ZkServerRefusedError, ZkSessionLostError } from '../core/errors/errors.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import type { ServerFacts } from '../core/zookeeper/session/server-check.js';
import type { ZkSession } from '../core/zookeeper/session/zk-session.js';
import { ZkLockLogger } from './lock-logger.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

const id = (session: ZkSession): string => `0x${session.id || '?'}`;

/**
 * The ZooKeeper session's life in the application's log (context `ZkLock`): connected
 * (server, session id, negotiated timeout) at log; disconnected, at risk and a server left
 * (an observer, a timeout under 2 × tickTime) at warn; a
 * lost session at error; trusted again at log. Nothing per lock call, and never a
 * credential. Subscribed at module init, before the backend connects, and unsubscribed at
 * shutdown.
 */
@Injectable()
export class ZkSessionLog implements OnModuleInit, OnApplicationShutdown {
  private readonly logger: ZkLockLogger;
  // Each event passes its own arguments.
  private readonly listeners: Record<string, (...args: any[]) => void> = {
    connected: (session: ZkSession) =>
      this.logger.log(
        `Connected to ZooKeeper at ${session.server ?? 'an unknown server'} (session ${id(session)}, timeout ${session.timeoutMs} ms).`,
      ),
    disconnected: (session: ZkSession) =>
      this.logger.warn(
        `Disconnected from ZooKeeper (session ${id(session)}); reconnecting. Held locks stay valid until the session is at risk.`,
      ),
    'at-risk': (session: ZkSession, unprovenForMs: number) =>
      this.logger.warn(
        `ZooKeeper session ${id(session)} at risk: no proof for ${unprovenForMs} ms that the leader heard from it. Its held locks are reported lost (their signals abort); new grants wait for a proof.`,
      ),
    recovered: (session: ZkSession) =>
      this.logger.log(`ZooKeeper session ${id(session)} is trusted again: new grants go ahead.`),
    'server-refused': (session: ZkSession, error: ZkServerRefusedError) =>
      this.logger.warn(`ZooKeeper session ${id(session)} leaves a server: ${error.message}`),
    'server-checked': (session: ZkSession, server: string, facts?: ServerFacts) => {
      // Operators keep observers out of the string and minSessionTimeout ≥ 2 × tickTime (docs/operations.md).
      if (facts?.mode === undefined || facts.tickTimeMs === undefined)
        this.logger.debug(
          `ZooKeeper server ${server} did not say ${facts?.mode === undefined ? 'its mode (srvr)' : 'its tickTime (conf)'}: not checked for observers and a timeout of 2 × tickTime (session ${id(session)}).`,
        );
    },
    'session-lost': (error: ZkSessionLostError, askedBack: boolean) =>
      this.logger.error(
        `ZooKeeper session 0x${error.sessionId} lost (${error.why}): its locks are gone; ${askedBack ? 'asking the servers for it back, to delete its nodes at once (a new session if it expired).' : 'opening a new session.'}`,
      ),
  };

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: ZkLockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) options: LockServiceOptions,
  ) {
    this.logger = new ZkLockLogger(options.logLevels);
  }

  onModuleInit(): void {
    for (const [event, listener] of Object.entries(this.listeners)) this.backend.client.on(event, listener);
  }

  onApplicationShutdown(): void {
    for (const [event, listener] of Object.entries(this.listeners)) this.backend.client.off(event, listener);
  }
}
