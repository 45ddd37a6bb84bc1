// The public API. Everything else under lib/ is internal and may change without notice.

// Core: framework-free ZooKeeper locks.
export { ZkLockBackend } from './core/zookeeper/zk-lock-backend.js';
export type { ZkLockHandle } from './core/zookeeper/queue/zk-lock-handle.js';
export type { ZkLockOptions } from './core/zookeeper/zk-lock-options.js';
export type { ZkClientOptions } from './core/zookeeper/session/zk-client-options.js';
export type {
  AcquireOptions,
  LockBackend,
  LockContender,
  LockHandle,
  ReadOptions,
  ListedContender,
  ListedLease,
  ListedLock,
  LeaseListing,
  LockListing,
  LockMode,
  MultiLockHandle,
  AcquireLeaseOptions,
  LeaseContender,
  LeaseHandle,
} from './core/port/lock-backend.js';
export type { NodeFormat } from './core/port/lock-backend.js';
export type { ZkSessionState, ZkSessionStatus } from './core/zookeeper/session/session-status.js';
export { LOCK_CHANNELS } from './core/diagnostics/diagnostics.js';
export type {
  AcquireMessage,
  AcquireOutcome,
  EventLockKind,
  LostMessage,
  ReleaseMessage,
  SessionMessage,
} from './core/diagnostics/diagnostics.js';
export { encodeLockName, decodeLockName } from './core/naming/lock-name-codec.js';

// Errors: one base class, one class per failure.
export {
  LockRevocationRequestedError,
  ZkLockError,
  LockTimeoutError,
  LockUnavailableError,
  type UnavailableState,
  LockAbortedError,
  LockLostError,
  LockClientClosedError,
  LockClientNotStartedError,
  InvalidLockNameError,
  InvalidOptionError,
  ZkConnectionError,
  ZkSessionLostError,
  ZkServerRefusedError,
  ZkOperationError,
  LockUpgradeError,
  LockReentryError,
  InvalidLockListError,
  LockOrderError,
  LeaseLimitMismatchError,
  LockKindMismatchError,
  type FoundKind,
  type LockKind,
  InvalidLeaderGroupError,
  type ServerUnfitness,
} from './core/errors/errors.js';

// Reentrancy per async call chain, for any backend (what LockService uses).
export { ReentrantLocker } from './core/reentrancy/reentrant-locker.js';
export type {
  IfLocked,
  OnLockLost,
  WithLockCallOptions,
  WithLocksCallOptions,
  RunAlwaysOptions,
} from './core/reentrancy/with-lock-options.js';
export type { LeaseCallOptions } from './core/reentrancy/lease-calls.js';
export type { LockerEvents, LockLostEvent, LockSkippedEvent, SkipReason } from './core/reentrancy/locker-events.js';
export type { ReentrancyOption } from './core/reentrancy/reentrancy-option.js';

// Several locks at once, all or nothing, deadlock-free (backends' and ReentrantLocker's acquireAll).
export { acquireAll } from './core/multi/acquire-all.js';
export type { LockList, LockListEntry, MultiAcquireOptions } from './core/port/lock-backend.js';

// Leases: a counting semaphore of maxLeases holders (both backends' acquireLease and leaseContenders).
export type { ZkLeaseHandle } from './core/zookeeper/queue/zk-lease-handle.js';
export type { InMemoryLeaseHandle } from './core/memory/in-memory-handle.js';
export { MAX_LEASES } from './core/port/options.js';

// Leader election over any lock backend (leading a group = holding the lock "leader:<group>").
export { LeaderElection, type LeadershipChange, type LeadershipListener } from './core/leader/leader-election.js';
export type { LeaderElectionOptions } from './core/leader/leader-group.js';
export type { LeaderTerm } from './core/leader/leadership-term.js';
export type { LeaderWorkOptions } from './core/leader/leader-work.js';

// Testing without ZooKeeper (one process only).
export { InMemoryLockBackend } from './core/memory/in-memory-lock-backend.js';
export { InMemoryLockStore } from './core/memory/in-memory-lock-store.js';
export type { InMemoryLockHandle } from './core/memory/in-memory-handle.js';
export type { InMemoryLockBackendOptions } from './core/memory/in-memory-lock-options.js';

// Nest glue.
export { ZkLockModule } from './nest/zk-lock.module.js';
export type { ZkLockOptionsFactory } from './nest/zk-lock.module-definition.js';
export { ZK_LOCK_MODULE_OPTIONS } from './nest/zk-lock.module-definition.js';
export type { ZkLockModuleOptions } from './nest/zk-lock-module.options.js';
export type { ZkLockTestingOptions } from './nest/zk-lock-testing.options.js';
export { LockService } from './nest/lock.service.js';
export { WithLock, type WithLockOptions, type LockNameSource } from './nest/with-lock.decorator.js';
export { WithLease, type WithLeaseOptions } from './nest/with-lease.decorator.js';
export { ZK_LOCK_BACKEND } from './nest/zk-lock.constants.js';
export { LockErrorInterceptor, LockHttpErrorInterceptor } from './nest/lock-error.interceptor.js';
export { httpStatusOf, rpcErrorOf, type RpcLockError } from './nest/lock-error.mapping.js';
export { WithLockUsageError } from './nest/errors/with-lock-usage.error.js';
export { ZkLockModuleMissingError } from './nest/errors/zk-lock-module-missing.error.js';
export { LeadershipService } from './nest/leadership.service.js';
export { WhenLeader, type WhenLeaderOptions } from './nest/when-leader.decorator.js';
export { WhenLeaderUsageError } from './nest/errors/when-leader-usage.error.js';
