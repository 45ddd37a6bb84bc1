import {
  InvalidLeaderGroupError,
  LeaderElection,
  LockLostError,
  type LeadershipChange,
  type ZkLockBackend,
} from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;

/** One candidate: an election and every change it was told of, stamped with this process's clock. */
class Candidate {
  readonly changes: Array<LeadershipChange & { at: number }> = [];
  readonly election: LeaderElection;

  constructor(
    readonly backend: ZkLockBackend,
    group: string,
  ) {
    this.election = new LeaderElection(backend, group, { retryDelayMs: 50 });
    this.election.onChange((change) => this.changes.push({ ...change, at: performance.now() }));
  }

  /** When it was last told `leading` (0 if never). */
  at(leading: boolean): number {
    return this.changes.filter((c) => c.leading === leading).at(-1)?.at ?? 0;
  }
}

describe('leader election on ZooKeeper', () => {
  let fx: LockFixture;
  let clients: ZkLockBackend[];
  const candidates: Candidate[] = [];
  beforeAll(async () => {
    fx = await LockFixture.create('leader');
    clients = await Promise.all(['cand-a', 'cand-b', 'cand-c'].map((identity) => fx.backend({ identity })));
  });
  afterEach(async () => {
    await Promise.all(candidates.splice(0).map((c) => c.election.stop()));
  });
  afterAll(() => fx.cleanup());

  const join = (backend: ZkLockBackend, group: string): Candidate => {
    const candidate = new Candidate(backend, group);
    candidates.push(candidate);
    candidate.election.start();
    return candidate;
  };

  /** The identities written in the leader lock's nodes, in queue (sequence) order. */
  const queue = async (group: string): Promise<string[]> => {
    const dir = clients[0].pathOf(`leader:${group}`);
    const nodes = ((await fx.inspector.children(dir)) ?? []).sort(
      (x, y) => Number(x.slice(-10)) - Number(y.slice(-10)),
    );
    return Promise.all(nodes.map(async (node) => (await fx.inspector.data(`${dir}/${node}`)) ?? '?'));
  };
  const queued = (group: string, identities: string[]): Promise<void> =>
    waitUntil(
      async () => JSON.stringify(await queue(group)) === JSON.stringify(identities),
      `queue ${identities.join(', ')}`,
    );

  /** Three candidates joined in order a, b, c. */
  async function threeCandidates(group: string): Promise<Candidate[]> {
    const joined: Candidate[] = [];
    for (const [i, client] of clients.entries()) {
      joined.push(join(client, group));
      await waitUntil(async () => (await queue(group)).length === i + 1, `candidate ${i} queues`);
    }
    return joined;
  }

  it('elects exactly one leader, the first in the queue, and the others each watch only their predecessor', async () => {
    const [a, b, c] = await threeCandidates('one');
    await waitUntil(() => a.election.isLeader, 'a leads');
    expect(await queue('one')).toEqual(['cand-a', 'cand-b', 'cand-c']);
    expect([a, b, c].map((x) => x.election.isLeader)).toEqual([true, false, false]);
    expect(a.election.signal?.aborted).toBe(false);
    expect(b.election.signal).toBeUndefined();
    expect(typeof a.election.fencingToken).toBe('bigint');
    expect(b.election.fencingToken).toBeUndefined();
    expect(a.changes.map(({ group, leading }) => ({ group, leading }))).toEqual([{ group: 'one', leading: true }]);
    expect([b.changes, c.changes]).toEqual([[], []]);
    // Every candidate names the same leader: the identity a wrote into its node.
    expect(await Promise.all([a, b, c].map((x) => x.election.leader()))).toEqual(['cand-a', 'cand-a', 'cand-a']);

    const dir = clients[0].pathOf('leader:one');
    const nodes = (await fx.inspector.children(dir))!.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
    await waitUntil(async () => (await watchedPaths(zkPort(), dir)).size === 2, 'both followers watch');
    const watched = await watchedPaths(zkPort(), dir);
    expect([...watched.keys()].sort()).toEqual(
      nodes
        .slice(0, 2)
        .map((n) => `${dir}/${n}`)
        .sort(),
    );
    expect([...watched.values()]).toEqual([1, 1]);
  });

  it('stop() of the leader hands over at once to the next in the queue, and its node is gone', async () => {
    const [a, b, c] = await threeCandidates('handover');
    await waitUntil(() => a.election.isLeader, 'a leads');
    const signal = a.election.signal!;

    const stoppedAt = performance.now();
    await Promise.all([a.election.stop(), a.election.stop()]);
    await waitUntil(() => b.election.isLeader, 'b leads');
    const handover = b.at(true) - stoppedAt;
    console.log(`leader stop() -> next leads: ${handover.toFixed(1)} ms`);

    expect(handover).toBeLessThan(SESSION_MS / 4); // not left to a session timeout
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(a.changes.map((x) => x.leading)).toEqual([true, false]);
    expect(a.at(false)).toBeLessThan(b.at(true)); // told before the next one led
    expect(a.election.isLeader).toBe(false);
    expect(a.election.signal).toBeUndefined();
    expect(await queue('handover')).toEqual(['cand-b', 'cand-c']);
    expect(await b.election.leader()).toBe('cand-b');
    expect(c.election.isLeader).toBe(false);
  });

  it('after stop() nothing of a candidate is left: no node, no re-join, and the last one takes the directory', async () => {
    const [a, b, c] = await threeCandidates('leave');
    await waitUntil(() => a.election.isLeader, 'a leads');
    await c.election.stop(); // a waiting candidate
    expect(await queue('leave')).toEqual(['cand-a', 'cand-b']);
    await a.election.stop();
    await waitUntil(() => b.election.isLeader, 'b leads');
    await new Promise((r) => setTimeout(r, 300)); // a stopped election does not queue again
    expect(await queue('leave')).toEqual(['cand-b']);
    expect(c.changes).toEqual([]);
    await b.election.stop();
    expect(await fx.nodes('leader:leave')).toBeNull();
    expect(await b.election.leader()).toBeNull();
  });

  it('start() after stop() joins again, at the end of the queue', async () => {
    const [a, b] = await threeCandidates('rejoin');
    await waitUntil(() => a.election.isLeader, 'a leads');
    await a.election.stop();
    a.election.start();
    await queued('rejoin', ['cand-b', 'cand-c', 'cand-a']);
    // b leads once its watch tells it a's node went: ZooKeeper's queue can show a's new node first.
    await waitUntil(() => b.election.isLeader, 'b leads');
    expect(a.election.isLeader).toBe(false);
  });

  it('a crashed leader (its session expired) is followed by the next candidate; it re-joins with a new session', async () => {
    const crashing = await fx.expirable({ identity: 'crashing', sessionTimeoutMs: SESSION_MS });
    const leader = join(crashing, 'crash');
    await waitUntil(() => leader.election.isLeader, 'the expirable client leads');
    const next = join(clients[1], 'crash');
    await queued('crash', ['crashing', 'cand-b']);

    const expiring = performance.now();
    await fx.expire(crashing);
    await waitUntil(() => next.election.isLeader, 'the next candidate leads');
    console.log(`leader session expired -> next leads: ${(next.at(true) - expiring).toFixed(1)} ms (expiry included)`);
    expect(next.at(true) - expiring).toBeLessThan(SESSION_MS);

    await waitUntil(() => leader.changes.length === 2, 'the crashed leader is told');
    expect(leader.changes[1]).toMatchObject({ leading: false, reason: expect.any(LockLostError) });
    await queued('crash', ['cand-b', 'crashing']); // joined again, on its new session
    expect(await next.election.leader()).toBe('cand-b');
    expect(leader.election.isLeader).toBe(false);
  });

  it('a leader cut off by a silent partition is told it lost leadership before anyone else leads, and re-joins after healing', async () => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const cutOff = await fx.backend({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: SESSION_MS,
        identity: 'cut-off',
      });
      const leader = join(cutOff, 'partition');
      await waitUntil(() => leader.election.isLeader, 'the proxied client leads');
      const next = join(clients[1], 'partition');
      await queued('partition', ['cut-off', 'cand-b']);

      proxy.blackhole(); // no FIN, no RST
      await waitUntil(() => next.election.isLeader, 'the next candidate leads', 3 * SESSION_MS);
      const [lostAt, gainedAt] = [leader.at(false), next.at(true)];
      console.log(
        `partition: leader told at +${(lostAt - leader.at(true)).toFixed(0)} ms, next leads ${(gainedAt - lostAt).toFixed(1)} ms later`,
      );
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThan(gainedAt);
      expect(leader.changes[1]).toMatchObject({ leading: false, reason: expect.any(LockLostError) });
      expect(leader.election.isLeader).toBe(false);

      proxy.heal();
      await queued('partition', ['cand-b', 'cut-off']);
      expect(leader.election.isLeader).toBe(false);
      expect(await leader.election.leader()).toBe('cand-b');
      await leader.election.stop(); // before its proxy goes
    } finally {
      await proxy.stop();
    }
  });

  it('retries a failed attempt after retryDelayMs and leads once the cause is gone; stop() cancels a pending retry', async () => {
    const [first, second] = clients;
    const creates = (backend: ZkLockBackend): number => backend.client.counter.snapshot().create ?? 0;
    // An ephemeral node where the lock's directory belongs: ZooKeeper refuses it children
    // (NO_CHILDREN_FOR_EPHEMERALS), so every attempt fails until it is gone.
    const dir = first.pathOf('leader:blocked');
    await fx.inspector.create(fx.rootPath);
    expect(await fx.inspector.attempt('create', dir)).toBe('ok');

    const before = creates(first);
    const candidate = join(first, 'blocked'); // retryDelayMs: 50
    await waitUntil(() => creates(first) - before >= 3, 'three failed attempts');
    expect(candidate.election.isLeader).toBe(false);
    expect(candidate.changes).toEqual([]);

    const patient = new LeaderElection(second, 'blocked', { retryDelayMs: 60_000 });
    const patientBefore = creates(second);
    patient.start();
    await waitUntil(() => creates(second) > patientBefore, 'its first attempt');
    await new Promise((r) => setTimeout(r, 100)); // failed by now: it waits a minute to retry
    const stopping = performance.now();
    await patient.stop(); // would wait out the minute if the retry timer were not cancelled
    expect(performance.now() - stopping).toBeLessThan(100);
    expect(creates(second)).toBe(patientBefore + 1);

    expect(await fx.inspector.attempt('remove', dir)).toBe('ok');
    await waitUntil(() => candidate.election.isLeader, 'leads once the directory can be made');
    expect(await queue('blocked')).toEqual(['cand-a']);
    expect(candidate.changes.map((c) => c.leading)).toEqual([true]);
  });

  it.each<[string, unknown]>([
    ['an empty', ''],
    ['a non-string', undefined],
    ['a lone-surrogate', 'x\udc00'],
  ])('%s group: InvalidLeaderGroupError naming it, nothing sent to ZooKeeper', async (_, group) => {
    const before = clients[0].client.counter.total();
    expect(() => new LeaderElection(clients[0], group as string)).toThrow(InvalidLeaderGroupError);
    expect(() => new LeaderElection(clients[0], group as string)).toThrow(/^Invalid leader group/);
    expect(clients[0].client.counter.total()).toBe(before);
    expect(await fx.tree()).toEqual([]);
  });
});
