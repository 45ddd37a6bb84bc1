import { encodeLockName, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { runWorker } from '../support/run-worker';
import { ZkServer } from '../support/zookeeper/zk-server';

/**
 * On a server of its own, with tickTime 1000 (sessions up to 20 s), where the suite's
 * server grants at most 4 s: a megabyte of creates on a loaded machine (two busy loops
 * beside CI) kept the server from answering the client under test for longer than its 4 s
 * session, which then expired. What is tested here is batching, not a session's deadline
 * (test/faults covers those), so the sessions are long enough for a slow machine.
 */
describe('acquireAll on ZooKeeper: large groups', () => {
  const server = new ZkServer({ tickTime: 1000 });
  let fx: LockFixture;

  beforeAll(async () => {
    await server.start();
    fx = await LockFixture.create('multi-batches', server.connectionString);
  });
  afterAll(async () => {
    await fx?.cleanup();
    await server.destroy();
  });

  /**
   * The lock nodes of each name, all read at once (0 when its directory is gone), once every
   * release was confirmed: waited for once here, not per name (`fx.nodes` waits per call, a
   * thousand waits over a thousand handles, which starved the inspector's session).
   */
  const nodeCounts = async (names: string[]): Promise<number[]> => {
    await fx.releasesConfirmed();
    return Promise.all(
      names.map(async (name) => (await fx.inspector.children(`${fx.rootPath}/${encodeLockName(name)}`))?.length ?? 0),
    );
  };

  it('1,000 names of 1,024 characters (over 1 MB of creates): taken and released in several multis, the connection kept', async () => {
    const client: ZkLockBackend = await fx.backend({ emptyDirectoryGraceMs: 60_000, sessionTimeoutMs: 20_000 });
    const names = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'n'.repeat(1020)}`);
    // The directories exist already (a hot lock set), but for the last 10: the last multi
    // of creates is refused whole (NO_NODE) and its names are created on their own, while
    // the nodes of the multis before it stay theirs.
    await fx.inspector.create(fx.rootPath);
    await Promise.all(names.slice(0, -10).map((name) => fx.inspector.create(client.pathOf(name))));
    await client.client.liveSession().readyToReadTogether(); // the server said it takes multiRead
    const sessionId = client.client.session.id;
    let disconnects = 0;
    client.client.on('disconnected', () => disconnects++);
    // The client may leave a server itself (its liveness rules: a reply overdue on a starved
    // machine); only a drop it did not ask for can be ZooKeeper's ("Len error").
    const hooks = (client.client.session as unknown as { livenessHooks: { dropConnection(before: number): void } })
      .livenessHooks;
    const leave = hooks.dropConnection;
    let left = 0;
    hooks.dropConnection = (before) => {
      left++;
      leave(before);
    };
    let atRisk = 0;
    client.client.on('at-risk', () => atRisk++);
    const before = client.client.counter.snapshot();
    const group = await client.acquireAll(names, { timeoutMs: 30_000 });
    expect(group.handles.every((handle) => handle.isHeld())).toBe(true);
    expect(await nodeCounts(names)).toEqual(names.map(() => 1));
    // locks() reads the 1,000 directories' children (1 MB of paths) in multiReads of at most 512 KiB too.
    const listed = await client.locks();
    expect(listed.map(({ name, holders }) => [name, holders.length])).toEqual(names.map((name) => [name, 1]));
    await group.release();
    expect(await nodeCounts(names)).toEqual(names.map(() => 0));
    // ZooKeeper dropped no connection ("Len error" for a request over its jute.maxbuffer).
    expect({ sessionId: client.client.session.id, dropped: disconnects - left }).toEqual({ sessionId, dropped: 0 });
    // Over 1 MB of creates and as much of deletes, over 2 MB of the group's children reads
    // (two per directory): each in requests of at most 512 KiB, 3 + 3 multis and 5
    // multiReads; then locks(): 3 multiReads of children and 3 of the nodes' data.
    // (The client was idle before: its proof is as old as its last write. On a busy machine
    // the 1 MB of requests can take long enough that the group's first grant is not trusted;
    // its nodes then go in 3 more multis, and each lock is taken again on its own.)
    const { multi, multiRead } = countsSince(client, before);
    expect(multiRead).toBe(5 + 3 + 3);
    expect(atRisk > 0 ? [6, 9] : [6]).toContain(multi);
  }, 60_000);

  // Jest gives each test file a copy of `process` that Node's own warnings never reach: a process of its own hears them.
  it('12 names: no MaxListenersExceededWarning, with or without a signal of the caller', async () => {
    const report = await runWorker<{ warnings: string[] }>('acquire-all-warnings.worker.ts', {
      connectionString: server.connectionString,
      rootPath: `${fx.rootPath}/warnings`,
      count: 12,
    });
    expect(report.warnings).toEqual([]);
  });
});
