import { ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { ZkEnsemble } from '../support/zookeeper/zk-ensemble';

describe('a 3-server ensemble losing its leader while locks are held and awaited', () => {
  let ensemble: ZkEnsemble;
  const clients: ZkLockBackend[] = [];
  beforeAll(async () => (ensemble = await ZkEnsemble.start(3, 300)), 60_000); // sessions up to 6 s
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await ensemble.destroy();
  });

  it('keeps held locks held (same node, same token), aborts nothing, and serves waiters in order', async () => {
    const leader = await ensemble.leader();
    // Every client talks to the leader first, so killing it disconnects them all.
    const order = [leader, ...[0, 1, 2].filter((i) => i !== leader)];
    const connectionString = order.map((i) => ensemble.servers[i].connectionString).join(',');
    const rootPath = uniqueRoot('ensemble');
    for (let i = 0; i < 4; i++)
      clients.push(await ZkLockBackend.connect({ connectionString, rootPath, sessionTimeoutMs: 6000 }));
    const [holderClient, ...waiterClients] = clients;

    const held = await holderClient.acquire('job');
    const grants: Array<{ waiter: number; lock: ZkLockHandle }> = [];
    const errors: unknown[] = [];
    const waits = waiterClients.map(async (client, waiter) => {
      await waitUntil(
        async () => (await holderClient.contenders('job')).length === waiter + 1,
        `waiter ${waiter} queues in turn`,
      );
      try {
        const lock = await client.acquire('job', { timeoutMs: 60_000 });
        grants.push({ waiter, lock });
        await lock.release();
      } catch (error) {
        errors.push(error);
      }
    });
    await waitUntil(async () => (await holderClient.contenders('job')).length === 4, 'three waiters queue');
    const queueBefore = (await holderClient.contenders('job')).map((c) => c.node);
    const sessionsBefore = clients.map((c) => c.client.session.id);

    await ensemble.kill(leader);
    const newLeader = await ensemble.leader();
    expect(newLeader).not.toBe(leader);
    await waitUntil(() => clients.every((c) => c.client.session.isConnected), 'every client reconnects');
    await waitUntil(
      async () => (await holderClient.contenders('job').catch(() => [])).length === 4,
      'the queue is readable again',
    );

    expect(clients.map((c) => c.client.session.id)).toEqual(sessionsBefore);
    expect(held.signal.aborted).toBe(false);
    expect((await holderClient.contenders('job')).map((c) => c.node)).toEqual(queueBefore);
    expect(queueBefore[0]).toBe(nodeOf(held));

    await held.release();
    await Promise.all(waits);
    expect(errors).toEqual([]);
    expect(grants.map((g) => g.waiter)).toEqual([0, 1, 2]);
    const tokens = [held.fencingToken, ...grants.map((g) => g.lock.fencingToken)];
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    // A new leader starts a new epoch, in the high 32 bits of every zxid after it.
    expect(grants[0].lock.fencingToken >> 32n).toBeGreaterThan(held.fencingToken >> 32n);

    await ensemble.restart(leader);
  });
});
