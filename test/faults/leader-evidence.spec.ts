import { LockLostError, ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { fourLetter } from '../support/zookeeper/four-letter';
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
  const clients: ZkLockBackend[] = [];
  let ensemble: PartitionableEnsemble | undefined;
  const rootPath = uniqueRoot('leader-evidence');

  const connect = async (connectionString: string): Promise<ZkLockBackend> => {
    const client = await ZkLockBackend.connect({
      connectionString,
      rootPath,
      sessionTimeoutMs: SESSION_MS,
      emptyDirectoryGraceMs: 0,
    });
    clients.push(client);
    return client;
  };
  /** The index of the server a client's session is connected to, from the servers' `cons`. */
  const serverOf = async (client: ZkLockBackend): Promise<number> => {
    const sid = `sid=0x${BigInt(`0x${client.client.session.id}`).toString(16)}`;
    for (const [i, server] of ensemble!.servers.entries())
      if ((await fourLetter(server.clientPort, 'cons')).includes(sid)) return i;
    throw new Error(`no server lists ${sid}`);
  };
  const others = (i: number): string =>
    [0, 1, 2]
      .filter((j) => j !== i)
      .map((j) => ensemble!.clientConnect(j))
      .join(',');

  afterEach(async () => {
    if (ensemble) for (const i of [0, 1, 2]) ensemble.heal(i);
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
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
      const held = await holder.acquire('job');
      let abortedAt = 0;
      held.signal.addEventListener('abort', () => (abortedAt = performance.now()));
      const waiting = waiter.acquire('job', { timeoutMs: 60_000 }).then((lock) => ({ lock, at: performance.now() }));
      const inspector = await ZkInspector.connect(others(target));
      try {
        await waitUntil(
          async () => (await inspector.children(holder.pathOf('job')))?.length === 2,
          'the waiter queues',
        );

        const cutAt = performance.now();
        ensemble.isolate(target);
        const { lock, at: grantedAt } = await waiting;

        expect(abortedAt).toBeGreaterThan(0);
        expect(abortedAt).toBeLessThan(grantedAt);
        // Nothing the cut-off server says after the cut proves anything (reads it serves from
        // its own copy, a re-attach a deposed leader accepts): the abort comes within the
        // session timeout of the cut, however long that server goes on serving.
        expect(abortedAt - cutAt).toBeLessThan(SESSION_MS);
        expect(held.signal.reason).toBeInstanceOf(LockLostError);
        expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
        // On the majority's side, the holder's node is gone and the waiter's is the only one.
        expect(await inspector.children(holder.pathOf('job'))).toEqual([nodeOf(lock)]);
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
    const from = await serverOf(holder);
    ensemble.isolate(from);
    await waitUntil(
      async () => holder.client.session.isConnected && (await serverOf(holder).catch(() => from)) !== from,
      'the holder moves to the other follower',
    );
    await new Promise((r) => setTimeout(r, SESSION_MS)); // well past the old session's life
    expect(held.signal.aborted).toBe(false);
    expect(holder.client.session.id).toBe(sessionId);
    const inspector = await ZkInspector.connect(ensemble.clientConnect(leader));
    try {
      expect(await inspector.children(holder.pathOf('kept'))).toEqual([nodeOf(held)]);
      await held.release();
      expect(await inspector.children(holder.pathOf('kept'))).toBeNull();
    } finally {
      await inspector.close();
    }
  });
});

function nodeOf(lock: ZkLockHandle): string {
  return lock.path.slice(lock.path.lastIndexOf('/') + 1);
}
