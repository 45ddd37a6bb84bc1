import { LeaderElection, type LeadershipChange, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { ZkServer } from '../support/zookeeper/zk-server';

/**
 * What a leadership listener is told when the change it hears of is undone while the
 * listeners are still being told of it.
 *
 * `LeaderElection` tells its listeners synchronously, one after another. When one of them
 * (or anything it calls) ends the term before all have heard of it, the `leading: false` of
 * that end must reach every listener after the `leading: true`, never before it: a listener
 * that heard `false` then `true` would believe it leads while another candidate is told it
 * leads (two leaders by what the listeners were told). Delivered re-entrantly, it did.
 *
 * Each test asserts, for the second listener of the candidate, that the changes alternate
 * starting with `true` (so its last word matches `isLeader`), and on ZooKeeper's own state
 * that the other candidate's node heads the queue.
 */

const SEQ = (node: string): number => Number(node.slice(-10));

class Listener {
  readonly changes: LeadershipChange[] = [];
  readonly listen = (change: LeadershipChange): void => void this.changes.push(change);
  /** What this listener was told last: does it believe it leads? */
  get believesLeading(): boolean {
    return this.changes.at(-1)?.leading ?? false;
  }
}

describe('leadership listeners told every change in order', () => {
  /**
   * On a server of its own, with tickTime 500 (sessions up to 10 s): the blocked-loop test
   * needs candidates whose sessions outlive the block by far. A session cannot prove itself
   * again after a block until a read answered after it is a pair gap (0.3 T) old, so on the
   * suite's server (sessions up to 4 s) a 2.6 s block put the other candidate's session at
   * risk 0.5 s after its grant, and it stepped down to a queue that the first candidate,
   * on a new session, now headed.
   */
  const server = new ZkServer({ tickTime: 500 });
  let fx: LockFixture;
  const elections: LeaderElection[] = [];
  beforeAll(async () => {
    await server.start();
    fx = await LockFixture.create('leader-listener-order', server.connectionString);
  });
  afterEach(async () => {
    await Promise.all(elections.splice(0).map((e) => e.stop()));
  });
  afterAll(async () => {
    await fx.cleanup();
    await server.destroy();
  });

  const elect = (backend: ZkLockBackend, group: string): LeaderElection => {
    const election = new LeaderElection(backend, group, { retryDelayMs: 20 });
    elections.push(election);
    return election;
  };

  /** The identity written in the first node (queue order) of the group's leader lock, read from ZooKeeper. */
  async function headOfQueue(backend: ZkLockBackend, group: string): Promise<string | null> {
    const dir = backend.pathOf(`leader:${group}`);
    const nodes = ((await fx.inspector.children(dir)) ?? []).sort((a, b) => SEQ(a) - SEQ(b));
    return nodes.length ? fx.inspector.data(`${dir}/${nodes[0]}`) : null;
  }

  const alternates = (changes: LeadershipChange[]): boolean =>
    changes.every((change, i) => change.leading === (i % 2 === 0));

  it('a listener that steps down on `leading: true`: a later listener hears false, then true, and believes it leads', async () => {
    const [a, b] = await Promise.all([fx.backend({ identity: 'a' }), fx.backend({ identity: 'b' })]);
    const ea = elect(a, 'step-down');
    const first = new Listener();
    const second = new Listener();
    // "Lead once, then hand over" (or any shutdown path that runs from a listener).
    ea.onChange((change) => {
      first.listen(change);
      if (change.leading) void ea.stop();
    });
    ea.onChange(second.listen);
    ea.start();
    await waitUntil(() => first.changes.length >= 2, 'a led and stepped down');
    const eb = elect(b, 'step-down');
    const bListener = new Listener();
    eb.onChange(bListener.listen);
    eb.start();
    await waitUntil(() => eb.isLeader, 'b leads');
    expect(await headOfQueue(a, 'step-down')).toBe('b'); // ZooKeeper: b's node heads the queue

    expect(first.changes.map((c) => c.leading)).toEqual([true, false]);
    expect(ea.isLeader).toBe(false);
    expect(bListener.believesLeading).toBe(true);
    // The violation: a's second listener was told false, then true.
    expect(second.changes.map((c) => c.leading)).toEqual([true, false]);
    expect(alternates(second.changes)).toBe(true);
    expect(second.believesLeading).toBe(false);
  });

  it('an event loop blocked past the session while the listeners are told: the loss found by one listener reaches the next before its `true`', async () => {
    // a: a short session (2 s, expired by the server within 2.5 s of a's last word), b and c: long
    // ones (10 s) that outlive the block and the pair gap (3 s) after it that b's proof needs.
    const a = await fx.backend({ identity: 'a', sessionTimeoutMs: 2000 });
    const b = await fx.backend({ identity: 'b', sessionTimeoutMs: 10_000 });
    const c = await fx.backend({ identity: 'c', sessionTimeoutMs: 10_000 });
    const ec = elect(c, 'blocked');
    ec.start();
    await waitUntil(() => ec.isLeader, 'c leads first');
    const ea = elect(a, 'blocked');
    let armed = true;
    const first = new Listener();
    const second = new Listener();
    let signalSeen: AbortSignal | undefined;
    ea.onChange((change) => {
      first.listen(change);
      if (!change.leading || !armed) return;
      armed = false;
      // Slow synchronous start-up work (or a GC pause) longer than the session...
      const until = performance.now() + 2600;
      while (performance.now() < until);
      // ...then the work is handed the leader's signal: reading it checks the clock.
      signalSeen = ea.signal;
    });
    ea.onChange(second.listen);
    ea.start();
    await waitUntil(async () => (await fx.nodes('leader:blocked'))?.length === 2, 'a queues behind c');
    const eb = elect(b, 'blocked');
    const bListener = new Listener();
    eb.onChange(bListener.listen);
    eb.start();
    await waitUntil(async () => (await fx.nodes('leader:blocked'))?.length === 3, 'b queues behind a');
    await ec.stop(); // a leads, and blocks inside its listeners; its session expires meanwhile
    await waitUntil(() => eb.isLeader, 'b leads once a’s session expired', 15_000);
    expect(await headOfQueue(b, 'blocked')).toBe('b');
    expect(bListener.believesLeading).toBe(true);
    expect(ea.isLeader).toBe(false);
    expect(signalSeen?.aborted ?? true).toBe(true); // the first listener did learn of the loss
    // The violation: the second listener of a was told false, then true, and nothing after.
    expect(alternates(second.changes)).toBe(true);
    expect(second.believesLeading).toBe(false);
  }, 30_000);
});
