import { cutWhileHolding, expectToldBeforeGrant, serverOf, suiteClients, nodeOf } from '../support/cut-while-holding';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { PartitionableEnsemble } from '../support/zookeeper/partitionable-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const TICK_MS = 200;
const SESSION_MS = 3000;

/**
 * A holder connected to a server that is cut off from its peers: that server goes on
 * answering reads from its own copy (for syncLimit × tickTime), while the leader expires
 * the holder's session and grants the lock to a client on the majority. The holder must be
 * told strictly before (only answers the leader took part in count as proof of life), and
 * a holder whose connection string names the majority moves there and keeps its lock.
 */
describe('liveness proven by the leader, with one server cut off from its peers', () => {
  let ensemble: PartitionableEnsemble | undefined;
  const { connect, closeAll } = suiteClients(uniqueRoot('leader-evidence'), SESSION_MS);
  const others = (i: number): string =>
    [0, 1, 2]
      .filter((j) => j !== i)
      .map((j) => ensemble!.clientConnect(j))
      .join(',');

  afterEach(async () => {
    if (ensemble) for (const i of [0, 1, 2]) ensemble.heal(i);
    await closeAll();
    await ensemble?.destroy();
    ensemble = undefined;
  });

  it.each([
    ['a follower', 10],
    ['a follower', 25],
    ['the leader', 10],
    ['the leader', 25],
  ] as const)(
    'pinned to %s cut off (syncLimit %d × tickTime 200 vs session 3000 ms): aborts strictly before the majority grants',
    async (role, syncLimit) => {
      ensemble = await PartitionableEnsemble.start({ tickTime: TICK_MS, syncLimit });
      const leader = await ensemble.leader();
      const target = role === 'the leader' ? leader : (leader + 1) % 3;
      const holder = await connect(ensemble.clientConnect(target));
      const waiter = await connect(others(target));
      const inspector = await ZkInspector.connect(others(target));
      try {
        const outcome = await cutWhileHolding(holder, waiter, inspector, 'job', () => ensemble!.isolate(target));
        const { held, lock, cutAt, abortedAt, grantedAt } = outcome;
        await expectToldBeforeGrant(outcome, inspector);
        // Nothing the cut-off server says after the cut proves anything (reads it serves from
        // its own copy, a re-attach a deposed leader accepts): the abort comes within the
        // session timeout of the cut, however long that server goes on serving.
        expect(abortedAt - cutAt).toBeLessThan(SESSION_MS);
        console.log(
          `leader-evidence: ${role}, syncLimit ${syncLimit}: abort at +${Math.round(abortedAt - cutAt)} ms, grant at +${Math.round(grantedAt - cutAt)} ms (${(held.signal.reason as Error).message})`,
        );
        await lock.release();
      } finally {
        await inspector.close();
      }
    },
  );

  it('a holder whose string names the majority moves there when its follower is cut off, and keeps its lock', async () => {
    ensemble = await PartitionableEnsemble.start({ tickTime: TICK_MS, syncLimit: 10 });
    const leader = await ensemble.leader();
    const followers = [0, 1, 2].filter((i) => i !== leader);
    const holder = await connect(followers.map((i) => ensemble!.clientConnect(i)).join(','));
    const held = await holder.acquire('kept');
    const sessionId = holder.client.session.id;
    const from = (await serverOf(ensemble.servers, holder))!;
    ensemble.isolate(from);
    await waitUntil(
      async () => holder.client.session.isConnected && ((await serverOf(ensemble!.servers, holder)) ?? from) !== from,
      'the holder moves to the other follower',
    );
    await new Promise((r) => setTimeout(r, SESSION_MS)); // well past the old session's life
    expect(held.signal.aborted).toBe(false);
    expect(holder.client.session.id).toBe(sessionId);
    const inspector = await ZkInspector.connect(ensemble.clientConnect(leader));
    try {
      expect(await inspector.children(holder.pathOf('kept'))).toEqual([nodeOf(held)]);
      await held.release();
      await held.releaseConfirmed;
      expect(await inspector.children(holder.pathOf('kept'))).toBeNull();
    } finally {
      await inspector.close();
    }
  });
});
