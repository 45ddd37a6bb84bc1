import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

/**
 * An empty semaphore directory, with its stored count, must not be left behind after a
 * proper release and close.
 *
 * `DirectorySweeper` removes an idle directory after the grace period, or at `close()`. The
 * session the release was sent on may be lost by then (expired, replaced by a new one):
 * the removal must go on the client's current session. It used to go on the old one only,
 * and so never: the directory stayed, empty, for good, with the count it stores, and every
 * later client with another count was refused with LeaseLimitMismatchError although nobody
 * held or waited.
 *
 * ZooKeeper's own state is what is asserted: the directory must be gone after the grace
 * period, and after close().
 */
describe('a semaphore directory released on a session that is lost since', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('lease-directory-sweep')));
  afterAll(() => fx.cleanup());

  it('released, then the session expires within the grace period: the directory is still removed', async () => {
    const client = await fx.expirable({ emptyDirectoryGraceMs: 500 });
    const dir = client.pathOf('left');
    await (await client.acquireLease('left', { maxLeases: 2 })).release();
    expect(await fx.inspector.exists(dir)).toBe(true); // idle, kept for the grace period
    const before = client.client.session.id;
    await fx.expire(client);
    await waitUntil(
      () => client.client.session.id !== before && client.client.session.isConnected,
      'a new session for the client',
    );
    // Swept by the grace timer, on the new session (3 s: six grace periods).
    await waitUntil(async () => !(await fx.inspector.exists(dir)), 'the idle directory swept', 3000);
    await client.close();
    const afterClose = await fx.inspector.data(dir);
    // A client with another count, on an idle semaphore:
    const other = await fx.backend();
    const refused = await other
      .acquireLease('left', { maxLeases: 3, timeoutMs: 0 })
      .then((lease) => lease.release().then(() => null))
      .catch((error: Error) => error.name);
    expect({ afterClose, refused }).toEqual({ afterClose: null, refused: null });
  });

  it('released, then the session expires, then close() within the grace period: close removes it', async () => {
    const client = await fx.expirable({ emptyDirectoryGraceMs: 60_000 });
    const dir = client.pathOf('closed');
    await (await client.acquireLease('closed', { maxLeases: 2 })).release();
    const before = client.client.session.id;
    await fx.expire(client);
    await waitUntil(
      () => client.client.session.id !== before && client.client.session.isConnected,
      'a new session for the client',
    );
    expect(await fx.inspector.exists(dir)).toBe(true); // still idle: the grace period runs a minute
    await client.close();
    expect(await fx.inspector.exists(dir)).toBe(false);
  });

  it('the removal meets a connection loss (the session lives on): it is sent again on the next turn', async () => {
    // The grace timer sends a removal only while connected, so a loss must come with the
    // request itself: the link is cut as the directory's delete goes out, unsent.
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const client = await fx.backend({ connectionString: proxy.connectionString, emptyDirectoryGraceMs: 300 });
      const dir = client.pathOf('cut');
      const session = client.client.session.id;
      const cut = proxy.cutBefore(ZK_OP.delete, dir);
      await (await client.acquireLease('cut', { maxLeases: 2 })).release();
      await cut;
      expect(await fx.inspector.exists(dir)).toBe(true); // the delete never reached the server
      await waitUntil(async () => !(await fx.inspector.exists(dir)), 'the idle directory swept on a later turn', 5000);
      expect(client.client.session.id).toBe(session); // a connection loss only, not a new session
      expect(proxy.requests.filter((r) => r.op === ZK_OP.delete && r.path === dir)).toHaveLength(2);
      await client.close();
    } finally {
      await proxy.stop();
    }
  });

  it('control: without the expiry, the grace timer removes it', async () => {
    const client = await fx.backend({ emptyDirectoryGraceMs: 500 });
    const dir = client.pathOf('swept');
    await (await client.acquireLease('swept', { maxLeases: 2 })).release();
    expect(await fx.inspector.exists(dir)).toBe(true);
    await waitUntil(async () => !(await fx.inspector.exists(dir)), 'the idle directory swept', 5000);
  });
});
