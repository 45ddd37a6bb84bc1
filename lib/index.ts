// The public API, by what it is for. Everything else under lib/ is internal and may change
// without notice.

// The lock port: what every backend implements, and its handles and options.
export type {
  LockBackend,
  LockMode,
  NodeFormat,
  AcquireOptions,
  ReadOptions,
  LockHandle,
  // When release() resolves, and the promise of its confirmation every handle has.
  ReleaseMode,
  ReleaseConfirmation,
  LockContender,
  // Several locks at once (acquireAll).
  LockList,
  LockListEntry,
  MultiAcquireOptions,
  MultiLockHandle,
  // Leases: a counting semaphore of maxLeases holders (acquireLease, leaseContenders).
  AcquireLeaseOptions,
  LeaseHandle,
  LeaseContender,
  // What locks() lists.
  ListedLock,
  LockListing,
  LeaseListing,
  ListedContender,
  ListedLease,
  ListedRun,
  // Small records kept beside the locks (readRecord, writeRecord).
  RecordData,
  StoredRecord,
  WriteRecordOptions,
} from './core/port/lock-backend.js';
// Groups (joinGroup, groupMembers) and one-shot watches (watch), for membership and observers.
export type { GroupEntry, GroupMember, MemberData, WatchTarget, Unwatch } from './core/port/group.js';
export { MAX_MEMBER_DATA_BYTES } from './core/port/group.js';
export { MAX_LEASES } from './core/port/options.js';

// The ZooKeeper backend.
export { ZkLockBackend } from './core/zookeeper/zk-lock-backend.js';
export type { ZkLockOptions } from './core/zookeeper/zk-lock-options.js';
export type { ZkClientOptions } from './core/zookeeper/session/zk-client-options.js';
export type { ZkLockHandle } from './core/zookeeper/lock.js';
export type { ZkLeaseHandle } from './core/zookeeper/lease.js';
export type { ZkSessionState, ZkSessionStatus } from './core/zookeeper/session/session-status.js';

// The in-memory backend, for tests without ZooKeeper (one process only).
export { InMemoryLockBackend } from './core/memory/in-memory-lock-backend.js';
export { InMemoryLockStore } from './core/memory/in-memory-lock-store.js';
export type { InMemoryLockBackendOptions } from './core/memory/in-memory-lock-options.js';
export type { InMemoryLockHandle } from './core/memory/in-memory-handle.js';
export type { InMemoryLeaseHandle } from './core/memory/in-memory-handle.js';

// Built on the port, for any backend: several locks at once, all or nothing, deadlock-free.
export { acquireAll } from './core/multi/acquire-all.js';

// Built on the port: reentrancy per async call chain (what LockService uses).
export { ReentrantLocker } from './core/reentrancy/reentrant-locker.js';
export type {
  ReentrancyOption,
  WithLockCallOptions,
  WithLocksCallOptions,
  RunAlwaysOptions,
  LeaseCallOptions,
  IfLocked,
  OnLockLost,
} from './core/reentrancy/call-options.js';
export type { LockerEvents, LockLostEvent, LockSkippedEvent, SkipReason } from './core/reentrancy/lock-call-policy.js';

// Built on the port: leader election (leading a group = holding the lock "leader:<group>").
export { LeaderElection, type LeadershipChange, type LeadershipListener } from './core/leader/leader-election.js';
export type { LeaderElectionOptions } from './core/leader/leader-group.js';
export type { LeaderTerm } from './core/leader/leadership-term.js';
export type { LeaderWorkOptions } from './core/leader/leader-work.js';
export {
  MAX_PROCLAIMED_BYTES,
  type JsonValue,
  type LeaderInfo,
  type LeaderObserver,
} from './core/leader/leader-directory.js';

// Built on the port: group membership (live instances with ids and data, told of each change).
export {
  GroupMembership,
  type GroupMembershipOptions,
  type MembershipChange,
  type MembershipListener,
} from './core/membership/group-membership.js';

// Built on the port: work sharded over the live members of a group, a lock per part.
export { Partitioner, type PartitionChange, type PartitionListener } from './core/partition/partitioner.js';
export {
  MAX_PARTITIONS,
  type PartitionerOptions,
  type Partitions,
  type PartOf,
} from './core/partition/partitioner-options.js';
export type { PartitionHandle } from './core/partition/owned-part.js';

// Built on the port: a start-up step run by exactly one instance.
export { runOnce, type RunOnceOptions, type RunOnceRecord } from './core/run-once/run-once.js';

// Lock names, and what the library reports on node:diagnostics_channel.
export { encodeLockName, decodeLockName } from './core/naming/lock-name-codec.js';
export { LOCK_CHANNELS } from './core/diagnostics/diagnostics.js';
export type {
  AcquireMessage,
  AcquireOutcome,
  EventLockKind,
  LostMessage,
  LostReason,
  ReleaseMessage,
  SessionMessage,
} from './core/diagnostics/diagnostics.js';

// Errors: one base class, one class per failure.
export {
  ZkLockError,
  LockTimeoutError,
  LockAbortedError,
  LockUnavailableError,
  type UnavailableState,
  LockLostError,
  LockRevocationRequestedError,
  LockClientClosedError,
  LockClientNotStartedError,
  LockUpgradeError,
  LockReentryError,
  LockOrderError,
  InvalidLockNameError,
  InvalidLockListError,
  InvalidOptionError,
  InvalidLeaderGroupError,
  InvalidGroupError,
  MemberReplacedError,
  NotLeaderError,
  LeaseLimitMismatchError,
  LockKindMismatchError,
  type FoundKind,
  type LockKind,
  ZkConnectionError,
  type ZkConnectionFailure,
  ZkSessionLostError,
  ZkServerRefusedError,
  type ServerUnfitness,
  ZkOperationError,
  RecordUnreadableError,
  // Refused by a fenced store (nestjs-zk-lock/postgres), or the fence's own statement failed.
  StaleFencingTokenError,
  NoFenceHoldError,
  FenceStoreError,
} from './core/errors/errors.js';

// Nest: the module and its options.
export { ZkLockModule } from './nest/zk-lock.module.js';
export { ZK_LOCK_MODULE_OPTIONS, type ZkLockOptionsFactory } from './nest/zk-lock.module-definition.js';
export type { ZkLockModuleOptions } from './nest/zk-lock-module.options.js';
export type { ZkLockTestingOptions } from './nest/zk-lock-testing.options.js';
export { ZK_LOCK_BACKEND } from './nest/zk-lock.constants.js';

// Nest: the services.
export { LockService } from './nest/lock.service.js';
export { LeadershipService } from './nest/leadership.service.js';
export { PartitionService } from './nest/partition.service.js';
export { createLockServiceMock, type LockServiceMock, type LockServiceMockOptions } from './nest/lock-service-mock.js';

// Nest: the decorators.
export { WithLock, type WithLockOptions, type LockNameSource } from './nest/decorators/with-lock.decorator.js';
export { WithLease, type WithLeaseOptions } from './nest/decorators/with-lease.decorator.js';
export { WhenLeader, type WhenLeaderOptions } from './nest/decorators/when-leader.decorator.js';

// Nest: the glue's errors, and lock errors as HTTP and RPC answers.
export { WithLockUsageError, WhenLeaderUsageError, ZkLockModuleMissingError } from './nest/errors/errors.js';
export { LockErrorInterceptor } from './nest/errors/lock-error.interceptor.js';
export { httpStatusOf, retryAfterOf, rpcErrorOf, type RpcLockError } from './nest/errors/lock-error-mapping.js';
