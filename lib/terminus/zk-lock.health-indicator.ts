import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';

import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import type { ZkSessionStatus } from '../core/zookeeper/session/session-status.js';
import { LockService } from '../nest/lock.service.js';
import { ZK_LOCK_BACKEND } from '../nest/zk-lock.constants.js';

/**
 * `@nestjs/terminus` health indicator for the lock client's ZooKeeper session: `up` while
 * the session is connected and trusted (a lock granted now is safe), `down` otherwise
 * (disconnected, at risk, lost, closed; and while a session given back after a loss still
 * deletes the nodes it left), and from the moment the application began to shut down
 * (it refuses new lock calls then; detail `shuttingDown: true`): a readiness probe, not a
 * liveness one (docs/operations.md). Details: `state`, `sessionId`, `server`,
 * `provenAgoMs` (since the leader last proved it heard from the session), `timeoutMs`.
 *
 * ```ts
 * @Module({ imports: [TerminusModule, ZkLockModule.forRoot(…)], providers: [ZkLockHealthIndicator], controllers: [HealthController] })
 * // in HealthController:
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.zk.isHealthy('zookeeper')]); }
 * ```
 */
@Injectable()
export class ZkLockHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(ZK_LOCK_BACKEND) private readonly backend: Pick<ZkLockBackend, 'status'>,
    private readonly lockService: LockService,
  ) {}

  isHealthy<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    const status = this.backend.status();
    const details: Omit<ZkSessionStatus, 'state'> & { state: string; shuttingDown?: true } = { ...status };
    // Not read off a mock given for LockService (`createLockServiceMock`).
    if (this.lockService.shuttingDown === true) return indicator.down({ ...details, shuttingDown: true });
    return status.state === 'connected' ? indicator.up(details) : indicator.down(details);
  }
}
