import { ZkLockBackend, ZkServerRefusedError } from '../../lib/index';
import { resolveZkLockOptions } from '../../lib/core/zookeeper/zk-lock-options';
import type { ServerFacts } from '../../lib/core/zookeeper/session/server-check';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { fourLetter } from '../support/zookeeper/four-letter';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { ZkServer } from '../support/zookeeper/zk-server';

const TICK_MS = 1000;
/** Granted (minSessionTimeout is 1000) but under 2 × tickTime; long enough for a loaded machine. */
const SHORT_MS = 1500;

/**
 * The liveness proof needs a session timeout of at least 2 × tickTime (ZooKeeper's default
 * minSessionTimeout). A server configured below it (tickTime 1000, minSessionTimeout 1000)
 * grants a 1500 ms session when asked: the client refuses it when the server says its
 * tickTime (`conf` whitelisted), and cannot tell otherwise.
 */
describe('a server granting a session timeout under 2 × tickTime', () => {
  const rootPath = uniqueRoot('server-check');
  const withConf = new ZkServer({
    tickTime: TICK_MS,
    extraConfig: ['minSessionTimeout=1000'],
    fourLetterWords: ['srvr', 'conf', 'cons'],
  });
  const withoutConf = new ZkServer({
    tickTime: TICK_MS,
    extraConfig: ['minSessionTimeout=1000'],
    fourLetterWords: ['srvr', 'cons'],
  });
  const clients: ZkLockBackend[] = [];
  const connect = async (server: ZkServer, sessionTimeoutMs: number): Promise<ZkLockBackend> => {
    const client = await ZkLockBackend.connect({
      connectionString: server.connectionString,
      rootPath,
      sessionTimeoutMs,
    });
    clients.push(client);
    return client;
  };
  /** Connections the server holds for clients, but for the four-letter word asking. */
  const clientConnections = async (server: ZkServer): Promise<number> =>
    (await fourLetter(server.clientPort, 'cons')).split('\n').filter((line) => /sid=0x/.test(line)).length;

  beforeAll(() => Promise.all([withConf.start(), withoutConf.start()]));
  afterEach(() => Promise.allSettled(clients.splice(0).map((c) => c.close())));
  afterAll(() => Promise.all([withConf.destroy(), withoutConf.destroy()]));

  it('conf whitelisted: start fails with a ZkServerRefusedError naming tickTime, minSessionTimeout and what to set', async () => {
    const failed = await connect(withConf, SHORT_MS).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ZkServerRefusedError);
    expect(failed).toMatchObject({
      reason: 'unfit-server',
      server: withConf.connectionString,
      sessionTimeoutMs: SHORT_MS,
      unfitness: { reason: 'session-timeout', tickTimeMs: TICK_MS, minSessionTimeoutMs: 1000 },
    });
    expect((failed as Error).message).toMatch(
      /timeout of 1500 ms, less than 2 × its tickTime \(1000 ms; its minSessionTimeout is 1000 ms\).*sessionTimeoutMs of at least 2000.*minSessionTimeout at 2 × tickTime/,
    );
    // The refused connection is closed: the server sees the close a moment after the client made it.
    await waitUntil(async () => (await clientConnections(withConf)) === 0, 'the server to drop the refused connection');
  });

  it('conf whitelisted: a session of 2 × tickTime is used, and holds its lock', async () => {
    const client = await connect(withConf, 2 * TICK_MS);
    expect(client.client.session.timeoutMs).toBe(2 * TICK_MS);
    const lock = await client.acquire('job');
    const inspector = await ZkInspector.connect(withConf.connectionString);
    try {
      expect(await inspector.children(client.pathOf('job'))).toHaveLength(1);
      await lock.release();
      await lock.releaseConfirmed;
      expect(await inspector.children(client.pathOf('job'))).toEqual([]);
    } finally {
      await inspector.close();
    }
  });

  it('conf not whitelisted: the client cannot tell, and uses the server (operators keep the default)', async () => {
    const checked: (ServerFacts | undefined)[] = [];
    const options = { connectionString: withoutConf.connectionString, rootPath, sessionTimeoutMs: SHORT_MS };
    const client = ZkLockBackend.unconnected(resolveZkLockOptions(options));
    clients.push(client);
    client.client.on('server-checked', (_session: unknown, _server: string, facts?: ServerFacts) =>
      checked.push(facts),
    );
    await client.start();
    expect(client.client.session.timeoutMs).toBe(SHORT_MS);
    expect(checked).toEqual([{ takesMultiRead: true, mode: 'standalone' }]);
    await (await client.acquire('job')).release();
  });
});
