// `nestjs-zk-lock/terminus`: a separate entry point, so that applications without
// @nestjs/terminus (an optional peer) load nothing of it.
export { ZkLockHealthIndicator } from './zk-lock.health-indicator.js';
