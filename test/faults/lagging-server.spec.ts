import { ZkLockBackend } from '../../lib/index';
import { freePort } from '../support/free-port';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { uniqueRoot } from '../support/zk-test-env';
import { PartitionableEnsemble } from '../support/zookeeper/partitionable-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const SLOW_MS = 300;

/**
 * A create whose reply is lost, and a reconnect to a server that has not applied it yet:
 * commits are slow (both followers' requests and acks reach the leader SLOW_MS late), the
 * create goes out through follower 1 and the connection is cut at once, and the client
 * re-attaches through follower 2 before the create is committed. A lookup there finds no
 * node with the attempt's guid; a second create then queues behind the first, which
 * blocks the lock for the session's life. The lookup must see every create the leader
 * accepted.
 */
describe('a lost create reply, then a reconnect to a server lagging behind the leader', () => {
  let ensemble: PartitionableEnsemble;
  const proxies: TcpProxy[] = [];
  let client: ZkLockBackend | undefined;
  const rootPath = uniqueRoot('lagging');

  beforeAll(async () => {
    ensemble = await PartitionableEnsemble.start({ tickTime: 200 });
  });
  afterAll(async () => {
    await client?.close();
    await Promise.all(proxies.map((p) => p.stop()));
    await ensemble.destroy();
  });

  it('finds the first node (no second one), and gets the lock', async () => {
    const leader = await ensemble.leader();
    const [f1, f2] = [0, 1, 2].filter((i) => i !== leader);
    const [p1, p2] = [new TcpProxy(ensemble.servers[f1].clientPort), new TcpProxy(ensemble.servers[f2].clientPort)];
    proxies.push(p1, p2);
    await p1.start();
    p2.port = await freePort(); // named in the string, refusing until started
    client = await ZkLockBackend.connect({
      connectionString: `${p1.connectionString},127.0.0.1:${p2.port}`,
      rootPath,
      sessionTimeoutMs: 4000,
      removeEmptyDirectories: false,
    });
    await (await client.acquire('job')).release(); // the directory exists; the lock is free
    await p2.start(); // the client will go there once follower 1's link is cut
    const inspector = await ZkInspector.connect(ensemble.clientConnect(leader));
    try {
      for (const f of [f1, f2]) ensemble.slowPeerLink(f, leader, SLOW_MS);
      const cut = p1.cutAfterSent(ZK_OP.create).then(() => p1.stop());
      const lock = await client.acquire('job', { timeoutMs: 8000 });
      await cut;
      const nodes = await inspector.children(client.pathOf('job'));
      expect(nodes).toEqual([lock.path.slice(lock.path.lastIndexOf('/') + 1)]);
      expect(p2.connectionCount).toBe(1); // it did re-attach through follower 2
      await lock.release();
      expect(await inspector.children(client.pathOf('job'))).toEqual([]); // nothing left (the directory is kept)
    } finally {
      for (const f of [f1, f2]) ensemble.slowPeerLink(f, leader, 0);
      await inspector.close();
    }
  });
});
