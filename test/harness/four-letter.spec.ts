import * as zookeeper from 'node-zookeeper-client';

import { waitFor } from '../support/wait-for';
import { fourLetter } from '../support/zookeeper/four-letter';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { closeRawClient, createNode, openRawClient, sessionIdOf, type RawClient } from './raw-client';

/**
 * `wchc` answers one block per session: the session id in hex (no leading zeros), then
 * one tab-indented line per watched path.
 */
function watchesBySession(wchc: string): Map<bigint, string[]> {
  const sessions = new Map<bigint, string[]>();
  let current: string[] | undefined;
  for (const line of wchc.split('\n')) {
    if (/^0x[0-9a-f]+$/i.test(line.trim()) && !/^\s/.test(line)) {
      current = [];
      sessions.set(BigInt(line.trim()), current);
    } else if (line.trim() && current) {
      current.push(line.trim());
    }
  }
  return sessions;
}

const watchedBy = async (sessionId: bigint): Promise<string[]> =>
  watchesBySession(await fourLetter(zkPort(), 'wchc')).get(sessionId) ?? [];

describe('fourLetter (four-letter commands to the test server)', () => {
  const root = uniqueRoot('four-letter');
  let inspector: ZkInspector;
  let raw: RawClient;

  beforeAll(async () => {
    inspector = await ZkInspector.connect(zkConnect());
    await inspector.create(root);
    raw = await openRawClient(zkConnect());
  });

  afterAll(async () => {
    await closeRawClient(raw.client);
    await inspector.removeTree(root);
    await inspector.close();
  });

  it('ruok and srvr answer', async () => {
    expect(await fourLetter(zkPort(), 'ruok')).toBe('imok');
    expect(await fourLetter(zkPort(), 'srvr')).toMatch(/^Mode: (standalone|leader|follower)$/m);
  });

  it('cons lists the client connection with its session id', async () => {
    const cons = await fourLetter(zkPort(), 'cons');
    const sids = [...cons.matchAll(/sid=(0x[0-9a-f]+)/gi)].map((m) => BigInt(m[1]));
    expect(sids).toContain(sessionIdOf(raw.client));
  });

  it('wchc lists a data watch under the session that set it, until it fires', async () => {
    const path = await createNode(raw.client, `${root}/watched`, zookeeper.CreateMode.PERSISTENT);
    const sessionId = sessionIdOf(raw.client);
    expect(await watchedBy(sessionId)).not.toContain(path);

    const fired: string[] = [];
    await new Promise<void>((resolve, reject) =>
      raw.client.getData(
        path,
        (event) => fired.push(`${event.getName()} ${event.getPath()}`),
        (error) => (error ? reject(error) : resolve()),
      ),
    );
    // The watch is registered on the server before the getData reply is sent.
    expect(await watchedBy(sessionId)).toContain(path);

    await inspector.removeTree(path);
    await waitFor(() => fired.length > 0, { what: 'the data watch to fire' });
    expect(fired).toEqual([`NODE_DELETED ${path}`]);
    // A fired watch is gone from the server.
    expect(await watchedBy(sessionId)).not.toContain(path);
  });
});
