import { setTimeout as sleep } from 'node:timers/promises';

import {
  MAX_PROCLAIMED_BYTES,
  NotLeaderError,
  type JsonValue,
  type LeaderInfo,
  InvalidLeaderGroupError,
  InvalidOptionError,
  LeaderElection,
  LockLostError,
  type LeadershipChange,
  type LockBackend,
} from '../../../lib/index';
import { thrownBy } from '../../support/thrown-by';
import { waitUntil } from '../../support/wait-until';
import { queued } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

const RETRY_DELAY_MS = 50;

const BAD_GROUPS: Array<[string, unknown]> = [
  ['empty', ''],
  ['not a string', 42],
  ['undefined', undefined],
  ['a lone surrogate', 'a\ud800'],
  ['too long', 'g'.repeat(2000)],
];

/** One candidate: its election, and what it was told, also written to a log shared by all. */
class Candidate {
  readonly election: LeaderElection;
  readonly changes: LeadershipChange[] = [];

  constructor(backend: LockBackend, group: string, label: string, log: string[]) {
    this.election = new LeaderElection(backend, group, { retryDelayMs: RETRY_DELAY_MS });
    this.election.onChange((change) => {
      this.changes.push(change);
      log.push(`${label}:${change.leading}`);
    });
  }

  get leading(): boolean[] {
    return this.changes.map((change) => change.leading);
  }
}

export function leadershipCases(ctx: ConformanceContext): void {
  const joined: Candidate[] = [];
  afterEach(async () => void (await Promise.all(joined.splice(0).map((c) => c.election.stop()))));

  /** A group of this case's own; its lock, `leader:<group>`, is checked empty after the case. */
  const newGroup = (label: string): string => ctx.name(`leader:${label}`).slice('leader:'.length);

  /** Who queues for `group`'s leadership, by identity, in queue order. */
  const queueOf = async (observer: LockBackend, group: string): Promise<Array<string | null>> =>
    (await observer.contenders(`leader:${group}`)).map((c) => c.identity);

  /**
   * Candidates on `backends`, labelled a, b, c…, joined in that order (each queues before
   * the next joins), with the log of what they were told; `observer` is one more client.
   */
  async function candidates(group: string, backends: LockBackend[]) {
    const [observer] = await ctx.world.backends(1);
    const log: string[] = [];
    const list: Candidate[] = [];
    for (const [i, backend] of backends.entries()) {
      const candidate = new Candidate(backend, group, 'abcdefgh'[i], log);
      joined.push(candidate);
      list.push(candidate);
      candidate.election.start();
      await queued(observer, `leader:${group}`, i + 1);
    }
    await waitUntil(() => list[0].election.isLeader, 'the first candidate leads');
    return { observer, log, list, identities: await queueOf(observer, group) };
  }

  it('elects one leader among three candidates, the first to queue; leader() names it as contenders shows it', async () => {
    const group = newGroup('one');
    const { observer, list, identities } = await candidates(group, await ctx.world.backends(3));
    const [a, b, c] = list;
    expect(list.map((x) => x.election.isLeader)).toEqual([true, false, false]);
    expect(new Set(identities).size).toBe(3);
    const holders = (await observer.contenders(`leader:${group}`)).filter((x) => x.holding);
    expect(holders.map((x) => x.identity)).toEqual([identities[0]]);
    expect(await Promise.all(list.map((x) => x.election.leader()))).toEqual([
      identities[0],
      identities[0],
      identities[0],
    ]);

    expect(a.election.signal?.aborted).toBe(false);
    expect(typeof a.election.fencingToken).toBe('bigint');
    expect([b.election.signal, b.election.fencingToken, c.election.signal]).toEqual([undefined, undefined, undefined]);
    expect(a.changes).toEqual([{ group, leading: true }]);
    expect([b.changes, c.changes]).toEqual([[], []]);
  });

  it('stop() of the leader: its listeners hear leading:false first, then the next candidate leads', async () => {
    const group = newGroup('handover');
    const { observer, log, list, identities } = await candidates(group, await ctx.world.backends(3));
    const [a, b, c] = list;
    const signal = a.election.signal!;

    await Promise.all([a.election.stop(), a.election.stop()]);
    await waitUntil(() => b.election.isLeader, 'b leads');
    expect(log).toEqual(['a:true', 'a:false', 'b:true']);
    expect(a.changes[1]).toEqual({ group, leading: false, reason: expect.any(LockLostError) });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(a.changes[1].reason);
    expect([a.election.isLeader, a.election.signal, c.election.isLeader]).toEqual([false, undefined, false]);
    expect(await queueOf(observer, group)).toEqual(identities.slice(1));
    expect(await a.election.leader()).toBe(identities[1]);
  });

  it('a leader whose lock is lost is told leading:false, another leads, and the lost one joins again at the back', async () => {
    const group = newGroup('lost');
    const losable = await ctx.world.losable();
    const { observer, list, identities } = await candidates(group, [losable, ...(await ctx.world.backends(2))]);
    const [a, b] = list;
    const signal = a.election.signal!;

    await ctx.world.lose(losable, { name: a.election.lockName, signal });
    expect(a.leading).toEqual([true, false]);
    expect(a.changes[1].reason).toBeInstanceOf(LockLostError);
    expect(signal.reason).toBe(a.changes[1].reason);
    expect(a.election.isLeader).toBe(false);
    await waitUntil(() => b.election.isLeader, 'b leads');
    await waitUntil(
      async () => (await queueOf(observer, group)).at(-1) === identities[0],
      'the lost leader queues again',
    );
    expect(await queueOf(observer, group)).toEqual([...identities.slice(1), identities[0]]);
    expect(await a.election.leader()).toBe(identities[1]);
    expect([a.leading, b.leading]).toEqual([[true, false], [true]]);
  });

  it('stop() leaves no contender and no leader, a stopped candidate does not join again, and start() joins again', async () => {
    const group = newGroup('leave');
    const { observer, list, identities } = await candidates(group, await ctx.world.backends(2));
    const [a, b] = list;
    await b.election.stop(); // a waiting candidate: told nothing
    await a.election.stop();
    await ctx.world.releasesConfirmed(); // the observer reads on its own connection
    expect(await observer.contenders(`leader:${group}`)).toEqual([]);
    expect(await a.election.leader()).toBeNull();
    await sleep(3 * RETRY_DELAY_MS); // long enough for a retry, had the campaign gone on
    expect(await observer.contenders(`leader:${group}`)).toEqual([]);
    expect([a.leading, b.leading]).toEqual([[true, false], []]);

    b.election.start();
    await waitUntil(() => b.election.isLeader, 'b leads after joining again');
    expect(await queueOf(observer, group)).toEqual([identities[1]]);
    await b.election.stop();
    await ctx.world.releasesConfirmed();
    expect(await observer.contenders(`leader:${group}`)).toEqual([]);
  });

  it.each(BAD_GROUPS)('refuses a group that is %s with InvalidLeaderGroupError naming it', async (_, group) => {
    const [backend] = await ctx.world.backends(1);
    const error = thrownBy(() => new LeaderElection(backend, group as string));
    expect(error).toBeInstanceOf(InvalidLeaderGroupError);
    expect(error).toMatchObject({ code: 'INVALID_LEADER_GROUP', group });
    expect((error as Error).message).toMatch(/^Invalid leader group /);
  });

  it('refuses a bad retryDelayMs with InvalidOptionError naming it', async () => {
    const [backend] = await ctx.world.backends(1);
    for (const retryDelayMs of [-1, NaN, Infinity, '5']) {
      const error = thrownBy(
        () => new LeaderElection(backend, newGroup('bad-retry'), { retryDelayMs: retryDelayMs as number }),
      );
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'retryDelayMs' });
    }
  });

  describe('the leader directory: observe() and proclaim()', () => {
    const observers: Array<() => void> = [];
    afterEach(() => observers.splice(0).forEach((unsubscribe) => unsubscribe()));

    /** A pure observer of `group` (it never starts), and what it was told. */
    async function observing(group: string) {
      const [backend] = await ctx.world.backends(1);
      const seen: Array<LeaderInfo | null> = [];
      observers.push(new LeaderElection(backend, group).observe((leader) => seen.push(leader)));
      await waitUntil(() => seen.length > 0, 'the observer is told who leads now');
      return seen;
    }

    it('a pure observer is told null, then the leader with its token, its proclaimed value, and the next leader', async () => {
      const group = newGroup('observe');
      const seen = await observing(group);
      expect(seen).toEqual([null]);
      const { list, identities } = await candidates(group, await ctx.world.backends(2));
      const [a, b] = list;
      const tokenA = a.election.fencingToken!;
      await waitUntil(() => seen.at(-1)?.node !== undefined, 'a is seen leading');
      expect(seen.at(-1)).toMatchObject({ group, leader: identities[0], fencingToken: tokenA, value: null });

      await expect(b.election.proclaim({ url: 'http://b' })).rejects.toBeInstanceOf(NotLeaderError);
      await a.election.proclaim({ url: 'http://a' });
      await waitUntil(() => seen.at(-1)?.value !== null, 'the value is seen');
      expect(seen.at(-1)).toMatchObject({ leader: identities[0], fencingToken: tokenA, value: { url: 'http://a' } });

      await a.election.stop();
      await waitUntil(() => b.election.isLeader, 'b leads');
      await waitUntil(() => seen.at(-1)?.leader === identities[1], 'b is seen leading');
      const last = seen.at(-1)!;
      expect(last.fencingToken).toBe(b.election.fencingToken);
      expect(last.fencingToken > tokenA).toBe(true);
      expect(last.value).toBeNull(); // a's value is a's term's, never b's
      // Never the old leader with a newer token, nor a value under another leader's term.
      for (const leader of seen.filter((x): x is LeaderInfo => x !== null)) {
        expect(leader.leader === identities[0] ? leader.fencingToken : tokenA).toBe(tokenA);
        if (leader.leader === identities[1]) expect(leader.value).toBeNull();
      }
      await b.election.stop();
      await waitUntil(() => seen.at(-1) === null, 'nobody leads: null');
    });

    it('a candidate observing sees itself lead; a leader says its value again at the next term it wins', async () => {
      const group = newGroup('again');
      const [backend, other] = await ctx.world.backends(2);
      const a = new Candidate(backend, group, 'a', []);
      joined.push(a);
      const seen: Array<LeaderInfo | null> = [];
      observers.push(a.election.observe((leader) => seen.push(leader)));
      a.election.start();
      await waitUntil(() => a.election.isLeader, 'a leads');
      await a.election.proclaim('primary');
      const first = a.election.fencingToken!;
      await waitUntil(() => seen.at(-1)?.value === 'primary', 'a sees its value');
      await a.election.stop();
      const b = new Candidate(other, group, 'b', []);
      joined.push(b);
      b.election.start();
      await waitUntil(() => b.election.isLeader, 'b leads');
      a.election.start(); // behind b
      await b.election.stop();
      await waitUntil(() => a.election.isLeader, 'a leads again');
      await waitUntil(
        () => seen.at(-1)?.fencingToken === a.election.fencingToken && seen.at(-1)?.value === 'primary',
        'a is seen with its value under its new term',
      );
      expect(a.election.fencingToken! > first).toBe(true);
    });

    it.each<[string, unknown]>([
      ['a BigInt', 1n],
      ['a value over MAX_PROCLAIMED_BYTES', 'x'.repeat(MAX_PROCLAIMED_BYTES)],
      ['undefined', undefined],
    ])('proclaim refuses %s with InvalidOptionError, leading or not', async (_, value) => {
      const group = newGroup('bad-value');
      const { list } = await candidates(group, await ctx.world.backends(1));
      await expect(list[0].election.proclaim(value as JsonValue)).rejects.toBeInstanceOf(InvalidOptionError);
    });
  });
}
