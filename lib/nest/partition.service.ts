import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';

import { InvalidOptionError } from '../core/errors/errors.js';
import { partitionMessages } from '../core/errors/messages.js';
import { Partitioner } from '../core/partition/partitioner.js';
import type { PartOf, PartitionerOptions, Partitions } from '../core/partition/partitioner-options.js';
import type { PartitionHandle } from '../core/partition/owned-part.js';
import type { LockBackend } from '../core/port/lock-backend.js';
import { BootstrapLifecycle } from './bootstrap-lifecycle.js';
import { ZK_LOCK_BACKEND, ZK_LOCK_RESOLVED_OPTIONS } from './zk-lock.constants.js';
import type { LockServiceOptions } from './zk-lock-module.options.js';

/**
 * Work sharded over this application's live instances (see `Partitioner`): `join(group,
 * options)` makes this instance a member of `group`, from bootstrap (once the backend is
 * connected) until shutdown, when it gives its parts up (listeners told `revoked`,
 * `onRevoked` drains them for up to `revokeGraceMs`, by default the module's
 * `shutdownGraceMs`) and leaves, all before the ZooKeeper client closes, so the other
 * instances take its parts over at once.
 *
 * ```ts
 * constructor(partitions: PartitionService) {
 *   this.shards = partitions.join('orders-sync', { partitions: 64, memberId: process.env.POD_NAME });
 * }
 * @Cron('*\/10 * * * * *')
 * async sync() {
 *   for (const part of this.shards.owned()) await this.syncPart(part, this.shards.handle(part));
 * }
 * ```
 */
@Injectable()
export class PartitionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly partitioners = new Map<string, Partitioner>();

  private readonly lifecycle: BootstrapLifecycle;

  constructor(
    @Inject(ZK_LOCK_BACKEND) private readonly backend: LockBackend,
    @Inject(ZK_LOCK_RESOLVED_OPTIONS) private readonly options: LockServiceOptions,
  ) {
    this.lifecycle = new BootstrapLifecycle(backend);
  }

  /**
   * Makes this instance a member of `group` with these options (those of `Partitioner`;
   * `revokeGraceMs` defaults to the module's `shutdownGraceMs`), and returns its
   * partitioner: `owned()`, `handle(part)`, `onChange()`, `members()`. Before bootstrap it
   * starts at bootstrap; after, at once (`await partitioner.start()` to see it joined).
   * Throws `InvalidGroupError` / `InvalidOptionError` for bad input, and for a group this
   * application joined already (get it with `partitioner(group)`).
   */
  join<T extends Partitions>(group: string, options: PartitionerOptions<T>): Partitioner<T> {
    if (this.partitioners.has(group))
      throw new InvalidOptionError('group', group, partitionMessages.joinedTwice(group));
    const withGrace = { revokeGraceMs: this.options.shutdownGraceMs, ...options };
    const partitioner = new Partitioner(this.backend, group, withGrace);
    this.partitioners.set(group, partitioner as unknown as Partitioner);
    if (this.lifecycle.running) void partitioner.start().catch(() => undefined); // awaited by the caller's own start()
    return partitioner;
  }

  /** The partitioner of `group` this application joined, if any. */
  partitioner(group: string): Partitioner | undefined {
    return this.partitioners.get(group);
  }

  /** The parts of `group` this instance owns now, sorted; none when it did not join `group`. */
  owned<T extends Partitions = Partitions>(group: string): Array<PartOf<T>> {
    return (this.partitioners.get(group)?.owned() ?? []) as Array<PartOf<T>>;
  }

  /** The ownership of `part` of `group` (see `Partitioner.handle`); `undefined` when not owned, or not joined. */
  handle(group: string, part: number | string): PartitionHandle | undefined {
    return this.partitioners.get(group)?.handle(part);
  }

  /** Leaves `group` (see `Partitioner.stop`): its parts are drained, released and taken over by the others. */
  async leave(group: string): Promise<void> {
    const partitioner = this.partitioners.get(group);
    this.partitioners.delete(group);
    await partitioner?.stop();
  }

  /**
   * Starts the groups joined so far once the backend is connected; a group that cannot be
   * joined fails start-up. A failed connection is left to `LockService`, which fails
   * start-up naming the connection string.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.lifecycle.bootstrap(this.partitioners.size > 0))) return;
    await Promise.all([...this.partitioners.values()].map((partitioner) => partitioner.start()));
  }

  /**
   * Every group is left: listeners told `revoked`, `onRevoked` drains for up to its
   * `revokeGraceMs` (default `shutdownGraceMs`), the part locks released and the group
   * left. All before `LockService` closes the client in `onApplicationShutdown`, which Nest
   * calls after every module's `beforeApplicationShutdown`.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.shutdown();
    await Promise.all([...this.partitioners.values()].map((partitioner) => partitioner.stop()));
  }
}
