import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';

import { ZkLockHealthIndicator } from '../../../lib/terminus/index.js';
import { HealthController } from './health.controller.js';

/** The instance's health for a load balancer or Kubernetes: the lock client's session, through @nestjs/terminus. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  providers: [ZkLockHealthIndicator],
  controllers: [HealthController],
})
export class HealthModule {}
