import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';

import { ZkLockHealthIndicator } from '../../../lib/terminus/index.js';

/** GET /health: 200 while this instance's ZooKeeper session is connected and trusted, 503 otherwise (a readiness probe). */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zookeeper: ZkLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
  }
}
