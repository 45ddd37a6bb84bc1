import { ZkLockBackend } from '../../lib/index';
import { nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { ZkEnsemble } from '../support/zookeeper/zk-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const LONG_MS = 80_000;
const SHORT_MS = 4000; // 20 × tickTime 200: ZooKeeper's default maxSessionTimeout

/**
 * Each server grants a session timeout of its own (between its min and maxSessionTimeout),
 * at every connect: a client asking 80 s gets 80 s from server 1 and 4 s from server 2. A
 * holder that fails over from the first to the second must keep the new timeout's pace,
 * and not count its old proof, made under 80 s, against 4 s.
 */
describe('a session failing over to a server that grants a much shorter timeout', () => {
  let ensemble: ZkEnsemble;
  let client: ZkLockBackend | undefined;
  beforeAll(
    async () => (ensemble = await ZkEnsemble.start(3, 200, (i) => (i === 0 ? [`maxSessionTimeout=${LONG_MS}`] : []))),
    60_000,
  );
  afterAll(async () => {
    await client?.close();
    await ensemble.destroy();
  });

  it('keeps its lock: the same node stays in ZooKeeper and the handle is not lost', async () => {
    const [long, short] = ensemble.servers;
    // The first connect can only go to the long-timeout server (the other two keep a quorum).
    await ensemble.kill(1);
    const connectionString = `${long.connectionString},${short.connectionString}`;
    client = await ZkLockBackend.connect({
      connectionString,
      rootPath: uniqueRoot('renegotiated'),
      sessionTimeoutMs: LONG_MS,
    });
    const session = client.client.session;
    expect(session.timeoutMs).toBe(LONG_MS);
    const lock = await client.acquire('job');
    const node = nodeOf(lock);
    const id = session.id;
    await ensemble.restart(1); // meanwhile, the proof ages as an 80 s session lets it
    await new Promise((resolve) => setTimeout(resolve, 3000));

    await ensemble.kill(0);
    await waitUntil(() => session.isConnected && session.timeoutMs === SHORT_MS, 're-attached to the 4 s server');
    // Several of the new timeouts: long enough for a session kept at the old pace to be lost.
    await new Promise((resolve) => setTimeout(resolve, 3 * SHORT_MS));

    expect(lock.signal.aborted).toBe(false);
    expect(client.client.session.id).toBe(id);
    const inspector = await ZkInspector.connect(short.connectionString);
    try {
      expect(await inspector.children(client.pathOf('job'))).toEqual([node]);
    } finally {
      await inspector.close();
    }
    await lock.release();
  }, 60_000);
});
