import {
  GroupMembership,
  InvalidGroupError,
  InvalidOptionError,
  MAX_MEMBER_DATA_BYTES,
  MemberReplacedError,
  type LockBackend,
  type MembershipChange,
} from '../../../lib/index';
import { thrownBy } from '../../support/thrown-by';
import { waitUntil } from '../../support/wait-until';
import { turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

const RETRY_DELAY_MS = 50;

/** Ids of the members, in the order listed. */
const idsOf = (members: ReadonlyArray<{ id: string }>): string[] => members.map((member) => member.id);

export function membershipCases(ctx: ConformanceContext): void {
  const made: GroupMembership[] = [];
  afterEach(async () => void (await Promise.all(made.splice(0).map((membership) => membership.leave()))));

  /** A group of this case's own (no lock of that name is ever taken, so the lock check after the case is empty). */
  const newGroup = (label: string): string => ctx.name(`group-${label}`);

  /** A membership on `backend`, with what it was told. */
  function member(backend: LockBackend, group: string, memberId?: string, data?: Record<string, unknown>) {
    const membership = new GroupMembership(backend, group, { memberId, data, retryDelayMs: RETRY_DELAY_MS });
    made.push(membership);
    const changes: MembershipChange[] = [];
    membership.onChange((change) => changes.push(change));
    return { membership, changes };
  }

  it('join: the member is listed with its data, by itself and by any other client, in id order', async () => {
    const [a, b, observer] = await ctx.world.backends(3);
    const group = newGroup('join');
    const second = member(b, group, 'worker-b', { zone: 'eu-2' });
    await second.membership.join();
    const first = member(a, group, 'worker-a', { zone: 'eu-1' });
    await first.membership.join();
    expect(idsOf(first.membership.members())).toEqual(['worker-a', 'worker-b']);
    const listed = await observer.groupMembers(group);
    expect(listed.map(({ id, data }) => ({ id, data }))).toEqual([
      { id: 'worker-a', data: { zone: 'eu-1' } },
      { id: 'worker-b', data: { zone: 'eu-2' } },
    ]);
    expect(listed[0].since).toBeInstanceOf(Date);
    expect(first.membership.isMember).toBe(true);
    await waitUntil(() => second.changes.some((c) => idsOf(c.joined).includes('worker-a')), 'b is told a joined');
    expect(idsOf(second.membership.members())).toEqual(['worker-a', 'worker-b']);
  });

  it('onChange: joins and leaves, told in order to a watcher that never joined', async () => {
    const [a, b, c] = await ctx.world.backends(3);
    const group = newGroup('changes');
    const watcher = member(c, group);
    await watcher.membership.watch();
    expect(watcher.membership.members()).toEqual([]);
    const first = member(a, group, 'a');
    await first.membership.join();
    await waitUntil(() => watcher.membership.members().length === 1, 'a seen');
    const second = member(b, group, 'b');
    await second.membership.join();
    await waitUntil(() => watcher.membership.members().length === 2, 'b seen');
    await first.membership.leave();
    await waitUntil(() => watcher.membership.members().length === 1, 'a gone');
    expect(first.membership.isMember).toBe(false);
    expect(watcher.changes.map((ch) => [idsOf(ch.joined), idsOf(ch.left), idsOf(ch.members)])).toEqual([
      [['a'], [], ['a']],
      [['b'], [], ['a', 'b']],
      [[], ['a'], ['b']],
    ]);
    expect(idsOf(await c.groupMembers(group))).toEqual(['b']);
  });

  it('a second instance joining with the same id takes it over; the first is told, and its leave() deletes nothing', async () => {
    const [a, b, observer] = await ctx.world.backends(3);
    const group = newGroup('same-id');
    const old = member(a, group, 'static-1', { run: 1 });
    await old.membership.join();
    const signal = old.membership.signal!;
    const restarted = member(b, group, 'static-1', { run: 2 });
    await restarted.membership.join();
    await waitUntil(() => signal.aborted, 'the first instance is told it was replaced');
    expect(signal.reason).toBeInstanceOf(MemberReplacedError);
    expect((signal.reason as MemberReplacedError).message).toMatch(/member "static-1" in group ".*" was replaced/);
    expect(old.membership.isMember).toBe(false);
    await old.membership.leave();
    const listed = await observer.groupMembers(group);
    expect(listed.map(({ id, data }) => ({ id, data }))).toEqual([{ id: 'static-1', data: { run: 2 } }]);
    expect(restarted.membership.isMember).toBe(true);
  });

  it('close() of a backend leaves its groups: the others see it go', async () => {
    const [a, b] = await ctx.world.backends(2);
    const closing = (await ctx.world.backends(1))[0];
    const group = newGroup('close');
    const staying = member(a, group, 'staying');
    await staying.membership.join();
    await member(closing, group, 'closing').membership.join();
    await waitUntil(() => staying.membership.members().length === 2, 'both seen');
    await closing.close();
    await waitUntil(() => idsOf(staying.membership.members()).join() === 'staying', 'the closed one is gone');
    expect(idsOf(await b.groupMembers(group))).toEqual(['staying']);
  });

  it('a member whose session is lost is a member again, with its data', async () => {
    const losable = await ctx.world.losable();
    const [observer] = await ctx.world.backends(1);
    const group = newGroup('lost');
    const lock = ctx.name('lost-session');
    const { membership } = member(losable, group, 'survivor', { v: 1 });
    await membership.join();
    const held = await losable.acquire(lock);
    await ctx.world.lose(losable, held);
    await held.release();
    await waitUntil(
      async () => idsOf(await observer.groupMembers(group)).includes('survivor'),
      'the entry is there again',
    );
    expect((await observer.groupMembers(group))[0].data).toEqual({ v: 1 });
    expect(membership.isMember).toBe(true);
    expect(membership.signal!.aborted).toBe(false);
  });

  it('watch(): told once of the next change of a lock queue, a record, a group; not after unwatch', async () => {
    const [a, b] = await ctx.world.backends(2);
    const lock = ctx.name('watched-lock');
    const record = ctx.name('watched-record');
    const group = newGroup('watched');
    const told: string[] = [];
    await a.watch({ lock }, () => told.push('lock'));
    await a.watch({ record }, () => told.push('record'));
    await a.watch({ group }, () => told.push('group'));
    const dropped = await a.watch({ record }, () => told.push('dropped'));
    dropped();
    const held = await b.acquire(lock);
    await b.writeRecord(record, { n: 1 });
    const entry = await b.joinGroup(group, 'x', {});
    await waitUntil(() => told.length === 3, 'the three watches fired');
    await held.release();
    await b.writeRecord(record, { n: 2 });
    await entry.leave();
    await b.releasesConfirmed();
    await turns();
    expect(told.sort()).toEqual(['group', 'lock', 'record']); // once each
  });

  it.each<[string, string | undefined, string, unknown]>([
    ['an empty group', undefined, '', {}],
    ['a group that is not a string', undefined, 42 as unknown as string, {}],
    ['an empty member id', '', 'g', {}],
    ['a member id with a lone surrogate', 'a\ud800', 'g', {}],
  ])('refuses %s with InvalidGroupError, before anything is sent', async (_, memberId, group, data) => {
    const [backend] = await ctx.world.backends(1);
    const error = thrownBy(
      () => new GroupMembership(backend, group, { memberId, data: data as Record<string, unknown> }),
    );
    expect(error).toBeInstanceOf(InvalidGroupError);
    expect((error as Error).message).toMatch(/^Invalid (group name|member id) /);
    await expect(backend.joinGroup(group, memberId ?? 'm', {})).rejects.toBeInstanceOf(InvalidGroupError);
  });

  it.each<[string, object]>([
    ['data that is an array', { memberId: 'm', data: [1] }],
    ['data over the size limit', { memberId: 'm', data: { s: 'x'.repeat(MAX_MEMBER_DATA_BYTES) } }],
    ['an unknown option', { memberID: 'm' }],
    ['a negative retryDelayMs', { memberId: 'm', retryDelayMs: -1 }],
  ])('refuses %s with InvalidOptionError; nothing joined', async (_, options) => {
    const [backend] = await ctx.world.backends(1);
    const group = newGroup('bad');
    expect(thrownBy(() => new GroupMembership(backend, group, options))).toBeInstanceOf(InvalidOptionError);
    const { data } = options as { data?: unknown };
    if (data !== undefined)
      await expect(backend.joinGroup(group, 'm', data as Record<string, unknown>)).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
    await expect(new GroupMembership(backend, group).join()).rejects.toBeInstanceOf(InvalidOptionError); // no memberId
    expect(await backend.groupMembers(group)).toEqual([]);
  });
}
