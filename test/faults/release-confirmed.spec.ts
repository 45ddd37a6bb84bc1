import { once } from 'node:events';
import { setImmediate as turn } from 'node:timers/promises';

import * as zookeeper from 'node-zookeeper-client';

import { LockUnavailableError, type ZkLockBackend } from '../../lib/index';
import { openRawClient } from '../harness/raw-client';
import { LockFixture } from '../support/lock-fixture';
import { settledFlag } from '../support/settled-flag';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const SESSION_MS = 4000;
const credentials = { username: 'ops', password: 'n0t-a-secret' };

/**
 * `releaseConfirmed` and `releasesConfirmed()` settle only on ZooKeeper's answer to the
 * delete (or the server's end of the session), never while the node may still be there;
 * `releasesConfirmed()` has a deadline while no session is connected.
 */
describe('release confirmations keep their word', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  beforeAll(async () => (fx = await LockFixture.create('release-confirmed')));
  beforeEach(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterEach(() => proxy.stop());
  afterAll(() => fx.cleanup());

  /**
   * Runs `body` while deletes in `dir` are refused (a read-only ACL, set by another client
   * with the credentials), then opens `dir` again and removes the suite's tree (made with the
   * credentials' ACL when these tests run alone). `body` gets an inspector with the credentials.
   */
  const refusingDeletes = async (dir: string, body: (owner: ZkInspector) => Promise<void>): Promise<void> => {
    const owner = await ZkInspector.connect(zkConnect(), `${credentials.username}:${credentials.password}`);
    const raw = await openRawClient(zkConnect());
    raw.client.addAuthInfo('digest', Buffer.from(`${credentials.username}:${credentials.password}`));
    const setAcl = (permission: number): Promise<void> =>
      new Promise((resolve, reject) =>
        raw.client.setACL(dir, [new zookeeper.ACL(permission, new zookeeper.Id('world', 'anyone'))], -1, (e) =>
          e ? reject(e) : resolve(),
        ),
      );
    await setAcl(zookeeper.Permission.READ);
    try {
      await body(owner);
    } finally {
      await setAcl(zookeeper.Permission.ALL).catch(() => undefined);
      raw.client.close();
      await owner.removeTree(fx.rootPath);
      await owner.close();
    }
  };

  const viaProxy = (): Promise<ZkLockBackend> =>
    fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });

  it('released after the client presumed its session lost: confirmed only once the node is gone, deleted through the session given back', async () => {
    const holder = await viaProxy();
    const held = await holder.acquire('presumed');
    const path = held.path;
    // Heard by the server (which keeps the session) but never answered: presumed lost.
    proxy.holdReplies();
    await once(holder.client, 'session-lost');
    await held.release(); // answered once sent
    const one = settledFlag(held.releaseConfirmed);
    const all = settledFlag(holder.releasesConfirmed({ timeoutMs: Infinity }));
    await turn();
    // The server keeps the session (not expired yet) and the node with it: nothing confirmed.
    expect(await fx.inspector.exists(path)).toBe(true);
    expect([one.settled, all.settled]).toEqual([false, false]);

    proxy.releaseReplies();
    await held.releaseConfirmed;
    expect(await fx.inspector.exists(path)).toBe(false); // ZooKeeper answered: gone
    await holder.releasesConfirmed();
    expect(holder.client.session.isLost).toBe(false); // the same server session, given back
  });

  it('releasesConfirmed({ timeoutMs }): rejects with LockUnavailableError while no session connects and a release is unconfirmed; at once with none, even cut off', async () => {
    const holder = await viaProxy();
    const held = await holder.acquire('cut-off');
    await proxy.stop(); // connections refused: the delete waits for a reconnect
    await held.release();
    // Holding nothing, the session is never declared lost by the client: without a deadline this would wait for ever.
    const error = await holder.releasesConfirmed({ timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockUnavailableError);
    expect((error as LockUnavailableError).subject).toBe('releasesConfirmed()');
    expect(await fx.inspector.exists(held.path)).toBe(true); // rightly not confirmed

    await proxy.start();
    await holder.releasesConfirmed({ timeoutMs: 30_000 });
    expect(await fx.inspector.exists(held.path)).toBe(false);
    await proxy.stop();
    await expect(holder.releasesConfirmed({ timeoutMs: 0 })).resolves.toBeUndefined(); // nothing unconfirmed
  });

  it('releasesConfirmed() waits for every unconfirmed release, not the first: one answered at once, one confirmed only when its session ends', async () => {
    const [client] = await fx.many(1, { credentials });
    const refused = await client.acquire('refused-delete');
    const answered = await client.acquire('answered-delete');
    const dir = client.pathOf('refused-delete');
    await refusingDeletes(dir, async (owner) => {
      // The first delete is refused (NO_AUTH): it is confirmed only once the session it ends
      // has ended, a round trip after the second delete's answer (per-session order).
      await Promise.all([refused.release(), answered.release()]);
      const refusedDone = settledFlag(refused.releaseConfirmed);
      await client.releasesConfirmed();
      expect(refusedDone.settled).toBe(true);
      expect(await owner.children(dir)).toEqual([]);
      expect(await owner.children(client.pathOf('answered-delete'))).toBeNull();
    });
  });
  it('a release whose delete is refused ends its session; if that close never reaches the server, it is confirmed only once the server expires the session and the node is gone', async () => {
    const client = await fx.backend({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: SESSION_MS,
      credentials,
    });
    const held = await client.acquire('unanswered-close');
    const dir = client.pathOf('unanswered-close');
    await refusingDeletes(dir, async (owner) => {
      // The delete is refused (NO_AUTH), so the session is ended; its close request is lost
      // with the link: the server keeps the session, and the node, until it expires it.
      const closeLost = proxy.cutBefore(ZK_OP.closeSession);
      const releasedAt = performance.now();
      await held.release();
      const confirmed = settledFlag(held.releaseConfirmed);
      await closeLost;
      expect(await owner.exists(held.path)).toBe(true);
      expect(confirmed.settled).toBe(false);
      await held.releaseConfirmed;
      expect(await owner.exists(held.path)).toBe(false);
      expect(performance.now() - releasedAt).toBeGreaterThanOrEqual(SESSION_MS - 1_000); // the server's expiry, not the close
    });
  });
});
