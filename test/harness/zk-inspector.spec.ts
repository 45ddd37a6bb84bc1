import type * as zookeeper from 'node-zookeeper-client';

import { expireSession } from '../support/zookeeper/expire-session';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/** The inspector's client, to expire its session as a starved process would lose it. */
const clientOf = (inspector: ZkInspector): zookeeper.Client =>
  (inspector as unknown as { client: zookeeper.Client }).client;

/**
 * The inspector is the tests' observer: a test that blocks its event loop for most of the
 * session timeout, or a loaded machine, can cost it its 4 s session; its view must survive.
 */
describe('ZkInspector', () => {
  const root = uniqueRoot('inspector');
  let inspector: ZkInspector;
  beforeAll(async () => (inspector = await ZkInspector.connect(zkConnect())));
  afterAll(async () => {
    await inspector.removeTree(root);
    await inspector.close();
  });

  it('reads on, in a new session, once ZooKeeper expired its session', async () => {
    await inspector.create(`${root}/a`);
    const expired = clientOf(inspector);
    await expireSession(zkConnect(), {
      sessionId: expired.getSessionId(),
      sessionPassword: expired.getSessionPassword(),
    });
    expect(await inspector.children(root)).toEqual(['a']);
    expect(clientOf(inspector).getSessionId().equals(expired.getSessionId())).toBe(false);
  });

  it('1,000 reads at once: answered, at most 64 in flight', async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => inspector.create(`${root}/many/${i}`)));
    let most = 0;
    const client = clientOf(inspector);
    const getChildren = client.getChildren.bind(client);
    let inFlight = 0;
    client.getChildren = ((
      path: string,
      callback: (error: Error | zookeeper.Exception | null, children: string[]) => void,
    ) => {
      most = Math.max(most, ++inFlight);
      getChildren(path, (error: Error | zookeeper.Exception | null, children: string[]) => {
        inFlight--;
        callback(error, children);
      });
    }) as typeof client.getChildren;
    const reads = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => inspector.children(`${root}/many/${i % 10}`)),
    );
    expect(reads).toEqual(reads.map(() => []));
    expect(most).toBe(64);
  });
});
