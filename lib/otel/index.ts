// `nestjs-zk-lock/otel`: a separate entry point, so that applications without
// @opentelemetry/api (an optional peer) load nothing of it.
export {
  registerZkLockMetrics,
  ZK_LOCK_METRICS,
  ZK_LOCK_NAME_ATTRIBUTE,
  type ZkLockMetricsOptions,
} from './zk-lock.metrics.js';
