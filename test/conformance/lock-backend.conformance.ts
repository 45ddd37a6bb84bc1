import type { LockBackend, LockHandle } from '../../lib/index';
import { exclusionCases } from './cases/exclusion.cases';
import { handleCases } from './cases/handle.cases';
import { kindChangeCases } from './cases/kind-change.cases';
import { leadershipCases } from './cases/leadership.cases';
import { lifecycleCases } from './cases/lifecycle.cases';
import { listingCases } from './cases/listing.cases';
import { maxHoldCases } from './cases/max-hold.cases';
import { membershipCases } from './cases/membership.cases';
import { multiLockCases } from './cases/multi-lock.cases';
import { partitionerCases } from './cases/partitioner.cases';
import { readWriteCases } from './cases/read-write.cases';
import { reentrancyCases } from './cases/reentrancy.cases';
import { revocationCases } from './cases/revocation.cases';
import { runOnceCases } from './cases/run-once.cases';
import { waitCases } from './cases/wait.cases';
import { validationCases } from './cases/validation.cases';
import { withLockOptionsCases } from './cases/with-lock-options.cases';

/**
 * One lock service as a backend's tests see it. Everything the world makes is closed by
 * `cleanup()`, which runs once after the whole suite.
 */
export interface LockWorld {
  /** `count` new clients of the one lock service, independent as separate processes are. */
  backends(count: number): Promise<LockBackend[]>;
  /**
   * `count` new clients that leave an idle name's state in place (ZooKeeper: its directory,
   * with `removeEmptyDirectories: false`), so that a case sees what the name was.
   */
  keepingIdleNames(count: number): Promise<LockBackend[]>;
  /** A new client whose held locks `lose` can take away (for ZooKeeper: an expirable session). */
  losable(): Promise<LockBackend>;
  /**
   * Takes the lock `held` (by `backend`, a `losable()` client) away from its holder, as a
   * crash would, and resolves once `held.signal` has aborted: a handle, or anything that
   * names the lock and aborts with it (a leader's term). May take every other lock
   * `backend` holds too (ZooKeeper expires the whole session): hold only this one.
   */
  lose(backend: LockBackend, held: LostLock): Promise<void>;
  /**
   * Resolves once every release the world's clients made has been confirmed: each client's
   * `releasesConfirmed()` (ZooKeeper: `release()` resolves when its delete is sent, so
   * another client reading at once could still see the node).
   */
  releasesConfirmed(): Promise<void>;
  cleanup(): Promise<void>;
}

/** What `lose` needs of a held lock: its name, and a signal that aborts when it is lost. */
export type LostLock = Pick<LockHandle, 'name' | 'signal'>;

export type MakeLockWorld = () => Promise<LockWorld>;

/** What each group of cases gets: the world, and lock names no other case uses. */
export interface ConformanceContext {
  /** The suite's world (valid inside `it`, `beforeEach` and `afterEach`). */
  readonly world: LockWorld;
  /** A lock name of this case's own, e.g. `name('fifo')` → `"fifo-7"`; checked empty after the case. */
  name(label: string): string;
}

/** A group of cases: a function that registers `it`s, given the context. */
export type ConformanceCases = (ctx: ConformanceContext) => void;

/**
 * The groups of cases, in the order they run. To add a case, add an `it` to the group it
 * belongs to (cases/*.cases.ts); to add a group, write a `ConformanceCases` function and
 * list it here.
 */
const GROUPS: ReadonlyArray<[string, ConformanceCases]> = [
  ['mutual exclusion and order', exclusionCases],
  ['shared (read) and exclusive (write) modes', readWriteCases],
  ['try, timeout and abort', waitCases],
  ['handles: tokens, release, loss, contenders', handleCases],
  ['cancelWaits and close', lifecycleCases],
  ['bad input', validationCases],
  ['reentrancy (ReentrantLocker)', reentrancyCases],
  ['withLock options: ifLocked, holdAtLeastMs, onLockLost (ReentrantLocker)', withLockOptionsCases],
  ['maxHoldMs: a holder that hangs gives the lock back', maxHoldCases],
  ['leader election (LeaderElection)', leadershipCases],
  ['revocation: revocable, requestRevocation', revocationCases],
  ['listing: locks(prefix)', listingCases],
  ['several locks at once: acquireAll, withLocks', multiLockCases],
  ['a name changes kind and lease count once idle', kindChangeCases],
  ['runOnce and the records it keeps', runOnceCases],
  ['group membership and watches (GroupMembership, joinGroup, watch)', membershipCases],
  ['sharding work (Partitioner)', partitionerCases],
];

/**
 * The `LockBackend` contract at the API level, run against any backend: `makeWorld` gives
 * clients of one lock service. Every lock name a case took with `ctx.name()` must have no
 * contender left when the case ends.
 */
export function describeLockBackendConformance(label: string, makeWorld: MakeLockWorld): void {
  describe(`LockBackend conformance: ${label}`, () => {
    let world: LockWorld | undefined;
    let observer: LockBackend;
    const used: string[] = [];
    let counter = 0;
    const ctx: ConformanceContext = {
      get world(): LockWorld {
        if (!world) throw new Error('the world exists only while the suite runs');
        return world;
      },
      name: (prefix) => {
        const name = `${prefix}-${++counter}`;
        used.push(name);
        return name;
      },
    };

    beforeAll(async () => {
      world = await makeWorld();
      [observer] = await world.backends(1);
    });
    afterAll(() => world?.cleanup());
    afterEach(async () => {
      const names = used.splice(0);
      await world?.releasesConfirmed();
      const left = await Promise.all(
        names.map(async (name) => [name, (await observer.contenders(name)).length] as const),
      );
      expect(left.filter(([, count]) => count > 0)).toEqual([]);
    });

    for (const [title, cases] of GROUPS) describe(title, () => cases(ctx));
  });
}
