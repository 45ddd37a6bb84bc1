import { ZkEnsemble } from '../support/zookeeper/zk-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { waitFor } from '../support/wait-for';
import { uniqueRoot } from '../support/zk-test-env';

/** Opens an inspector on one server, runs `fn`, and always closes it again. */
async function through<T>(connectionString: string, fn: (inspector: ZkInspector) => Promise<T>): Promise<T> {
  const inspector = await ZkInspector.connect(connectionString);
  try {
    return await fn(inspector);
  } finally {
    await inspector.close();
  }
}

describe('ZkEnsemble (three ZooKeeper servers on loopback)', () => {
  let ensemble: ZkEnsemble;
  const root = uniqueRoot('zk-ensemble');
  let oldLeader = -1;
  let newLeader = -1;

  const modes = () => Promise.all(ensemble.servers.map((s) => s.mode()));

  beforeAll(async () => {
    ensemble = await ZkEnsemble.start(3);
  });

  afterAll(async () => {
    if (!ensemble) return;
    const live = ensemble.servers.find((s) => s.running);
    if (live) await through(live.connectionString, (inspector) => inspector.removeTree(root)).catch(() => undefined);
    await ensemble.destroy();
  });

  it('has exactly one leader and two followers, on distinct client ports', async () => {
    expect(ensemble.servers).toHaveLength(3);
    const ports = ensemble.servers.map((s) => s.clientPort);
    expect(new Set(ports).size).toBe(3);
    expect(ensemble.connectionString).toBe(ports.map((p) => `127.0.0.1:${p}`).join(','));

    expect([...(await modes())].sort()).toEqual(['follower', 'follower', 'leader']);
    oldLeader = await ensemble.leader();
    expect(await ensemble.servers[oldLeader].mode()).toBe('leader');
  });

  it('replicates: a node created through one server is read through the others', async () => {
    const [a, b, c] = ensemble.servers.map((s) => s.connectionString);
    await through(a, (inspector) => inspector.create(`${root}/from-s1`, 'written on s1'));
    // Followers apply a commit asynchronously: a read elsewhere may lag for a moment.
    for (const other of [b, c]) {
      await through(other, (inspector) =>
        waitFor(async () => (await inspector.data(`${root}/from-s1`)) === 'written on s1', {
          timeoutMs: 5000,
          what: `${root}/from-s1 to be visible on ${other}`,
        }),
      );
    }
  });

  it('elects a new, different leader among the other two after the leader is killed', async () => {
    expect(oldLeader).toBeGreaterThanOrEqual(0);
    const started = Date.now();
    await ensemble.kill(oldLeader);
    expect(ensemble.servers[oldLeader].running).toBe(false);
    expect(await ensemble.servers[oldLeader].mode()).toBeUndefined();

    newLeader = await ensemble.leader(10_000);
    const electedInMs = Date.now() - started;
    expect(newLeader).not.toBe(oldLeader);
    expect(electedInMs).toBeLessThan(10_000);

    // The third server follows the new leader once it has synced with it.
    const third = [0, 1, 2].find((i) => i !== oldLeader && i !== newLeader)!;
    await waitFor(async () => (await ensemble.servers[third].mode()) === 'follower', {
      timeoutMs: 10_000,
      what: `server ${third + 1} to follow the new leader`,
    });

    // Two of three still form a quorum: the ensemble takes writes and kept the old data.
    await through(ensemble.servers[newLeader].connectionString, async (inspector) => {
      expect(await inspector.data(`${root}/from-s1`)).toBe('written on s1');
      await inspector.create(`${root}/while-down`, 'written without the old leader');
    });
  });

  it('lets the killed server rejoin as a follower that catches up', async () => {
    expect(newLeader).toBeGreaterThanOrEqual(0);
    await ensemble.restart(oldLeader);
    const rejoined = ensemble.servers[oldLeader];
    expect(rejoined.running).toBe(true);
    expect(await rejoined.mode()).toBe('follower');
    expect(await ensemble.leader()).toBe(newLeader);
    expect([...(await modes())].sort()).toEqual(['follower', 'follower', 'leader']);

    // It missed the write made while it was down; it must serve it now.
    await through(rejoined.connectionString, (inspector) =>
      waitFor(async () => (await inspector.data(`${root}/while-down`)) === 'written without the old leader', {
        timeoutMs: 5000,
        what: `${root}/while-down on the rejoined server`,
      }),
    );
  });
});
