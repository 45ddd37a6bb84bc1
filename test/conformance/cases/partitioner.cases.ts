import {
  InvalidGroupError,
  InvalidOptionError,
  LockLostError,
  MAX_PARTITIONS,
  Partitioner,
  type LockBackend,
  type PartitionChange,
  type PartitionerOptions,
  type Partitions,
} from '../../../lib/index';
import { PartitionChecker } from '../../support/partition-checker';
import { thrownBy } from '../../support/thrown-by';
import { waitUntil } from '../../support/wait-until';
import type { ConformanceContext } from '../lock-backend.conformance';

const BAD_OPTIONS: Array<[string, unknown, string]> = [
  ['no options', undefined, 'options'],
  ['no parts', {}, 'partitions'],
  ['a count of 0', { partitions: 0 }, 'partitions'],
  ['a count that is not whole', { partitions: 2.5 }, 'partitions'],
  ['a negative count', { partitions: -3 }, 'partitions'],
  ['a count as a string', { partitions: '8' }, 'partitions'],
  ['too many parts', { partitions: MAX_PARTITIONS + 1 }, 'partitions'],
  ['an empty list', { partitions: [] }, 'partitions'],
  ['duplicate keys', { partitions: ['eu', 'us', 'eu'] }, 'partitions'],
  ['an empty key', { partitions: ['eu', ''] }, 'partitions'],
  ['a key that is not a string', { partitions: ['eu', 7] }, 'partitions'],
  ['a key with a lone surrogate', { partitions: ['a\ud800'] }, 'partitions'],
  ['an unknown option', { partitions: 4, settleMS: 100 }, 'settleMS'],
  ['a negative settleMs', { partitions: 4, settleMs: -1 }, 'settleMs'],
  ['a NaN revokeGraceMs', { partitions: 4, revokeGraceMs: NaN }, 'revokeGraceMs'],
  ['an onRevoked that is no function', { partitions: 4, onRevoked: 'drain' }, 'onRevoked'],
];

export function partitionerCases(ctx: ConformanceContext): void {
  const started: Partitioner[] = [];
  afterEach(async () => void (await Promise.all(started.splice(0).map((partitioner) => partitioner.stop()))));

  function partitioner<T extends Partitions>(
    backend: LockBackend,
    group: string,
    options: PartitionerOptions<T>,
  ): Partitioner<T> {
    const made = new Partitioner(backend, group, options);
    started.push(made as unknown as Partitioner);
    return made;
  }

  /** Every part lock of `group` has no contender left (the suite checks only names from `ctx.name`). */
  async function partLocksEmpty(observer: LockBackend, group: string): Promise<void> {
    await ctx.world.releasesConfirmed();
    const left = (await observer.locks(`partition:${group}/`)).filter(
      (lock) => lock.kind === 'lock' && lock.holders.length + lock.waiters.length > 0,
    );
    expect(left.map((lock) => lock.name)).toEqual([]);
  }

  it('bad input: a typed error naming the option, before anything is sent', async () => {
    const [backend] = await ctx.world.backends(1);
    const group = ctx.name('bad-input');
    for (const [, options, option] of BAD_OPTIONS) {
      const error = thrownBy(() => new Partitioner(backend, group, options as PartitionerOptions));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe(option);
    }
    expect(thrownBy(() => new Partitioner(backend, '', { partitions: 2 }))).toBeInstanceOf(InvalidGroupError);
    expect(thrownBy(() => new Partitioner(backend, group, { partitions: 2, memberId: '' }))).toBeInstanceOf(
      InvalidGroupError,
    );
    expect(await backend.groupMembers(group)).toEqual([]);
    expect(await backend.locks(`partition:${group}/`)).toEqual([]);
  });

  it('one member owns every part, each with a held lock and its token; stop() gives them all back', async () => {
    const [backend, observer] = await ctx.world.backends(2);
    const group = ctx.name('alone');
    const changes: PartitionChange<string>[] = [];
    const one = partitioner(backend, group, { partitions: ['us', 'eu', 'apac'], memberId: 'only' });
    one.onChange((change) => changes.push(change));
    await one.start();
    await waitUntil(() => one.owned().length === 3, 'every part owned');
    expect(one.owned()).toEqual(['apac', 'eu', 'us']);
    expect(one.members().map(({ id }) => id)).toEqual(['only']);
    const handle = one.handle('eu')!;
    expect(handle).toMatchObject({ group, part: 'eu', fencingToken: expect.any(BigInt) });
    expect(handle.isHeld()).toBe(true);
    const eu = (await observer.contenders(`partition:${group}/eu`)).filter((c) => c.holding);
    expect(eu.map((c) => c.identity)).toEqual([backend.identity]);
    expect(thrownBy(() => one.handle('mars' as 'eu'))).toBeInstanceOf(InvalidOptionError);

    await one.stop();
    expect(changes.at(-1)).toEqual({ group, assigned: [], revoked: ['apac', 'eu', 'us'], lost: [], owned: [] });
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(() => handle.assertHeld()).toThrow(LockLostError);
    expect(one.handle('eu')).toBeUndefined();
    await partLocksEmpty(observer, group);
    expect(await observer.groupMembers(group)).toEqual([]);
  });

  it('two members share, balanced; a stop hands the parts over after onRevoked drained them; never two owners', async () => {
    const [a, b, observer] = await ctx.world.backends(3);
    const group = ctx.name('share');
    const checker = new PartitionChecker();
    const drains: number[][] = [];
    const first = partitioner(a, group, {
      partitions: 6,
      memberId: 'a',
      onRevoked: async (parts, signal) => {
        expect(signal.aborted).toBe(false);
        expect(parts.every((part) => first.handle(part)?.isHeld())).toBe(true); // still held while draining
        drains.push(parts);
        checker.add(
          ...parts.map((part) => ({
            member: 'a',
            at: process.hrtime.bigint(),
            kind: 'drained' as const,
            part: String(part),
          })),
        );
      },
    });
    const second = partitioner(b, group, { partitions: 6, memberId: 'b' });
    checker.watch('a', first);
    checker.watch('b', second);
    await first.start();
    await waitUntil(() => first.owned().length === 6, 'a owns every part');
    await second.start();
    await waitUntil(() => first.owned().length === 3 && second.owned().length === 3, 'three each');
    expect(drains).toEqual([expect.any(Array)]);
    expect(drains[0]).toHaveLength(3);
    await first.stop();
    await waitUntil(() => second.owned().length === 6, 'b owns every part');
    expect(checker.violations({ drains: true })).toEqual([]);
    await second.stop();
    await partLocksEmpty(observer, group);
  });

  it('a lost part lock is told as lost at once, and queued for again', async () => {
    const backend = await ctx.world.losable();
    const group = ctx.name('lost');
    const changes: PartitionChange<number>[] = [];
    const one = partitioner(backend, group, { partitions: 1, memberId: 'only' });
    one.onChange((change) => changes.push(change));
    await one.start();
    await waitUntil(() => one.owned().length === 1, 'the part owned');
    const handle = one.handle(0)!;
    await ctx.world.lose(backend, { name: `partition:${group}/0`, signal: handle.signal });
    expect(changes.find((change) => change.lost.length > 0)).toEqual({
      group,
      assigned: [],
      revoked: [],
      lost: [0],
      owned: [],
    });
    await waitUntil(() => one.owned().length === 1, 'the part owned again', 30_000);
    expect(one.handle(0)!.fencingToken).toBeGreaterThan(handle.fencingToken);
  });

  it('one backend is one member of a group: a second partitioner on it is refused', async () => {
    const [backend] = await ctx.world.backends(1);
    const group = ctx.name('twice');
    await partitioner(backend, group, { partitions: 2, memberId: 'x' }).start();
    const again = partitioner(backend, group, { partitions: 2, memberId: 'y' });
    await expect(again.start()).rejects.toBeInstanceOf(InvalidOptionError);
  });
}
