import { once } from 'node:events';

import { LockLostError } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { ZkEnsemble } from '../support/zookeeper/zk-ensemble';

const SESSION_MS = 4000;

describe('an ensemble down past the clients deadline, every server restarted on its data', () => {
  let ensemble: ZkEnsemble;
  let fx: LockFixture;
  beforeAll(async () => {
    ensemble = await ZkEnsemble.start(3);
    fx = await LockFixture.create('reattach-ensemble');
  });
  afterAll(async () => {
    await fx.cleanup();
    await ensemble.destroy();
  });

  it('each client asks its session back: the lock is free once its lost holder released it, while the revived sessions live, one session per client', async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() => fx.backend({ connectionString: ensemble.connectionString, sessionTimeoutMs: SESSION_MS })),
    );
    const ids = () => [a, b].map((backend) => sessionIdOf(backend.client.session.id)).sort();
    const before = ids();
    const held = await a.acquire('e1');
    const bHeld = await b.acquire('e1-b'); // holding, b's session is declared lost too (see reattach.spec.ts)
    const waiting = b.acquire('e1', { timeoutMs: 30_000 });
    await waitUntil(async () => (await a.contenders('e1')).length === 2, 'b queues');
    const lost = [once(a.client, 'session-lost'), once(b.client, 'session-lost')];

    await Promise.all(ensemble.servers.map((_, i) => ensemble.kill(i)));
    await Promise.all(lost);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await Promise.all(ensemble.servers.map((_, i) => ensemble.restart(i)));
    await waitUntil(() => a.client.session.isConnected && b.client.session.isConnected, 'a and b re-attached');
    // Told lost, not released: the revived session keeps the holder's node until it releases.
    expect((await a.contenders('e1'))[0].node).toBe(nodeOf(held));
    await held.release();

    const lock = await waiting;
    // The leader tracks every session: still the two first ones, and only those.
    expect(ids()).toEqual(before); // given back: an expired one would have come back under a new id
    const leader = ensemble.servers[await ensemble.leader()];
    const sessions = async () => [...(await liveSessions(leader.clientPort))].sort();
    await waitUntil(async () => (await sessions()).join() === before.join(), 'the leader keeps the two sessions only');
    expect((await b.contenders('e1')).map((c) => c.node)).toEqual([nodeOf(lock)]);
    await lock.release();
    expect(bHeld.signal.aborted).toBe(true); // told lost, its node kept by b's re-attached session
    expect((await b.contenders('e1-b')).map((c) => c.node)).toEqual([nodeOf(bHeld)]);
    await bHeld.release();
    await bHeld.releaseConfirmed;
    expect(await b.contenders('e1-b')).toEqual([]);
  });
});
