// `nestjs-zk-lock/schedule`: a separate entry point, so that applications without
// @nestjs/schedule (an optional peer) load nothing of it.
export { LeaderOnly } from './leader-only.decorator.js';
export { LeaderScheduler, type FollowLeadershipOptions } from './leader-scheduler.service.js';
export { LeaderJobError } from '../nest/errors/errors.js';
