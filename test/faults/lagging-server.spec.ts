import { ZkLockBackend } from '../../lib/index';
import { freePort } from '../support/free-port';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { PartitionableEnsemble } from '../support/zookeeper/partitionable-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const SLOW_MS = 300;

/** The session's liveness hooks; a test replaces one to take a mechanism out. */
type HooksOf = { livenessHooks: { heartbeat(): void } };

/**
 * A create whose reply is lost, and a reconnect to a server that has not applied it yet:
 * commits are slow (both followers' requests and acks reach the leader SLOW_MS late), the
 * create goes out through follower 1 and the connection is cut at once, and the client
 * re-attaches through follower 2 before the create is committed. A lookup there finds no
 * node with the attempt's guid; a second create then queues behind the first, which
 * blocks the lock for the session's life. The lookup must see every create the leader
 * accepted.
 *
 * Two writes can put the lookup behind the create on follower 2: the heartbeat the session
 * sends as it re-attaches, and the barrier the acquisition sends before its lookup. Only
 * the barrier is sent before the lookup for certain: with it taken out (one line in
 * `createNode`), both cases find a second node (checked by hand on 2026-11-27). The second
 * case also takes the heartbeat out, so that the lookup cannot pass by a write the session
 * happened to send.
 */
describe('a lost create reply, then a reconnect to a server lagging behind the leader', () => {
  let ensemble: PartitionableEnsemble;
  const proxies: TcpProxy[] = [];
  const clients: ZkLockBackend[] = [];
  const rootPath = uniqueRoot('lagging');

  beforeAll(async () => {
    ensemble = await PartitionableEnsemble.start({ tickTime: 400 });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(proxies.map((p) => p.stop()));
    await ensemble.destroy();
  });

  async function lostCreateThenLaggingServer(lock: string, withReattachHeartbeat: boolean): Promise<void> {
    const leader = await ensemble.leader();
    const [f1, f2] = [0, 1, 2].filter((i) => i !== leader);
    // A follower whose link was slowed may still be re-syncing (it serves no client then).
    const serving = async (): Promise<boolean> =>
      (await Promise.all([f1, f2].map((f) => ensemble.mode(f)))).every((mode) => mode === 'follower');
    await waitUntil(serving, 'both followers serving', 20_000);
    const [p1, p2] = [new TcpProxy(ensemble.servers[f1].clientPort), new TcpProxy(ensemble.servers[f2].clientPort)];
    proxies.push(p1, p2);
    await p1.start();
    p2.port = await freePort(); // named in the string, refusing until started
    const client = await ZkLockBackend.connect({
      connectionString: `${p1.connectionString},127.0.0.1:${p2.port}`,
      rootPath,
      sessionTimeoutMs: 8000,
      removeEmptyDirectories: false,
    });
    clients.push(client);
    await (await client.acquire(lock)).release(); // the directory exists; the lock is free
    if (!withReattachHeartbeat) {
      // The heartbeat the session sends as it re-attaches is skipped (once: the ticks after
      // it go on, or the session would be lost). A tick sends none while disconnected.
      const session = client.client.session;
      const hooks = (session as unknown as HooksOf).livenessHooks;
      const heartbeat = hooks.heartbeat.bind(hooks);
      let skip = false;
      session.once('disconnected', () => (skip = true));
      hooks.heartbeat = () => (skip ? (skip = false) : heartbeat());
    }
    await p2.start(); // the client will go there once follower 1's link is cut
    const inspector = await ZkInspector.connect(ensemble.clientConnect(leader));
    try {
      for (const f of [f1, f2]) ensemble.slowPeerLink(f, leader, SLOW_MS);
      const cut = p1.cutAfterSent(ZK_OP.create).then(() => p1.stop());
      const held = await client.acquire(lock, { timeoutMs: 8000 });
      await cut;
      const nodes = await inspector.children(client.pathOf(lock));
      expect(nodes).toEqual([held.path.slice(held.path.lastIndexOf('/') + 1)]);
      expect(p2.connectionCount).toBe(1); // it did re-attach through follower 2
      // Found by the lookup, not created again (a second node with the guid would be deleted
      // as an extra, but it costs two more writes and shows the lookup missed the first).
      const creates = p2.requests.filter((r) => r.op === ZK_OP.create && r.path?.startsWith(`${client.pathOf(lock)}/`));
      expect(creates).toEqual([]);
      await held.release();
      await held.releaseConfirmed;
      expect(await inspector.children(client.pathOf(lock))).toEqual([]); // nothing left (the directory is kept)
    } finally {
      for (const f of [f1, f2]) ensemble.slowPeerLink(f, leader, 0);
      await inspector.close();
      await client.close(); // before the next case slows the links again
    }
  }

  it('finds the first node (no second one), and gets the lock', () => lostCreateThenLaggingServer('job', true));

  it('with no heartbeat on re-attaching, the barrier before the lookup alone finds the first node', () =>
    lostCreateThenLaggingServer('job-2', false));
});
