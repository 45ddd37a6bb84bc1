import 'reflect-metadata';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import {
  InMemoryLockBackend,
  InMemoryLockStore,
  InvalidOptionError,
  PartitionService,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type LockBackend,
  type Partitioner,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

const PARTS = 8;

/** The documented pattern: a cron-like job that works on the parts this instance owns. */
@Injectable()
class ShardedSync {
  readonly shards: Partitioner<number>;
  readonly synced: Array<[number, bigint]> = [];
  readonly drained: number[][] = [];
  /**
   * What the lock client answered while each drain ran (it closes after): `held here` when it
   * could still read the part's queue and found this instance holding it (another member may
   * wait behind it, queued for the part since the assignment changed).
   */
  readonly answeredInDrain: string[] = [];

  constructor(
    partitions: PartitionService,
    private readonly backend: LockBackend,
  ) {
    this.shards = partitions.join('sync', {
      partitions: PARTS,
      onRevoked: async (parts) => {
        this.drained.push(parts);
        this.answeredInDrain.push(
          await this.backend.contenders(`partition:sync/${parts[0]}`, { timeoutMs: 1000 }).then(
            ([first]) =>
              first?.holding && first.identity === this.backend.identity ? 'held here' : JSON.stringify(first),
            (error: unknown) => String(error),
          ),
        );
      },
    });
  }

  /** What @Cron would call: one pass over the owned parts, each write fenced by its token. */
  tick(): void {
    for (const part of this.shards.owned()) {
      const owned = this.shards.handle(part);
      if (owned?.isHeld()) this.synced.push([part, owned.fencingToken]);
    }
  }
}

async function appWith(module: ReturnType<typeof ZkLockModule.forTesting>): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [module],
    providers: [
      {
        provide: ShardedSync,
        useFactory: (p: PartitionService, b: LockBackend) => new ShardedSync(p, b),
        inject: [PartitionService, ZK_LOCK_BACKEND],
      },
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('PartitionService', () => {
  it('forTesting: a working single-member partitioner; shutdown drains, releases and leaves', async () => {
    const store = new InMemoryLockStore();
    const observer = new InMemoryLockBackend({ store });
    const app = await appWith(ZkLockModule.forTesting({ store }));
    const job = app.get(ShardedSync);
    await waitUntil(() => job.shards.owned().length === PARTS, 'every part owned');
    job.tick();
    expect(job.synced.map(([part]) => part)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(app.get(PartitionService).owned('sync')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(() => app.get(PartitionService).join('sync', { partitions: 2 })).toThrow(InvalidOptionError);
    await app.close();
    expect(job.drained).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
    expect(job.answeredInDrain).toEqual(['held here']);
    expect(await observer.locks('partition:sync/')).toEqual([]);
    expect(await observer.groupMembers('sync')).toEqual([]);
    await observer.close();
  });

  it('forRoot on ZooKeeper: two instances share; one shutting down hands its parts over after draining them, its client still open', async () => {
    const rootPath = uniqueRoot('nest-partitions');
    const forRoot = (): ReturnType<typeof ZkLockModule.forRoot> =>
      ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0 });
    const first = await appWith(forRoot());
    const second = await appWith(forRoot());
    try {
      const [a, b] = [first.get(ShardedSync), second.get(ShardedSync)];
      await waitUntil(
        () => a.shards.owned().length === PARTS / 2 && b.shards.owned().length === PARTS / 2,
        'half each',
      );
      const aParts = a.shards.owned();
      await first.close();
      expect(a.drained.at(-1)).toEqual(aParts); // the last drain: at shutdown
      expect(new Set(a.answeredInDrain)).toEqual(new Set(['held here']));
      await waitUntil(() => b.shards.owned().length === PARTS, 'b owns every part');
      const backend = second.get<LockBackend>(ZK_LOCK_BACKEND);
      expect((await backend.groupMembers('sync')).map(({ id }) => id)).toEqual([b.shards.memberId]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
