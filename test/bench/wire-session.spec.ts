import { WireSession } from '../../bench/support/wire-session';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { liveSessions } from '../support/zookeeper/live-sessions';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';

/**
 * The benchmark's wire floor (targets 1g, E1g) is only a floor if its hand-spoken session
 * sends ZooKeeper the requests ours sends and does a real lock cycle: checked here on the
 * server's own state.
 */
describe('WireSession (the benchmark wire floor)', () => {
  const root = uniqueRoot('wire');
  let zk: ZkInspector;

  beforeAll(async () => {
    zk = await ZkInspector.connect(zkConnect());
    await zk.create(root);
  });
  afterAll(async () => {
    await zk.removeTree(root);
    await zk.close();
  });

  const cycle = (wire: WireSession, dir: string, prefix = 'w0__lock__'): Promise<void> =>
    new Promise((resolve, reject) => wire.cycle(dir, prefix, (error) => (error ? reject(error) : resolve())));

  it('creates a sequential node, reads the children and deletes the node, leaving the directory as it was', async () => {
    const dir = `${root}/cycles`;
    await zk.create(dir);
    const zxidBefore = await zk.childrenZxid(dir);
    const wire = await WireSession.connect(zkConnect());
    expect(await liveSessions(zkPort())).toContain(wire.sessionId);
    for (let i = 0; i < 20; i++) await cycle(wire, dir);
    expect(await zk.children(dir)).toEqual([]);
    expect(await zk.childrenZxid(dir)).not.toBe(zxidBefore); // the children really changed
    // Twenty creates went through the directory (each moves the cversion that numbers the
    // next sequential node; on ZooKeeper 3.8 a delete does not), then the blocker's: next is 21.
    await zk.create(`${dir}/a__lock__0000000000`);
    await expect(cycle(wire, dir)).rejects.toThrow(/w0__lock__0000000021 is not the lowest .*a__lock__0000000000/);
    await wire.close();
    expect(await liveSessions(zkPort())).not.toContain(wire.sessionId);
  });

  it("refuses the lock behind a lower lock node, and the session's close takes its node away at once", async () => {
    const dir = `${root}/held`;
    await zk.create(dir);
    const other = await WireSession.connect(zkConnect());
    await zk.create(`${dir}/h__lock__0000000000`);
    await expect(cycle(other, dir)).rejects.toThrow(
      /w0__lock__0000000001 is not the lowest under .*h__lock__0000000000/,
    );
    expect(await zk.children(dir)).toEqual(['h__lock__0000000000', 'w0__lock__0000000001']);
    await other.close();
    expect(await zk.children(dir)).toEqual(['h__lock__0000000000']);
  });

  it('fails a request ZooKeeper refuses with its error code, and stays usable', async () => {
    const wire = await WireSession.connect(zkConnect());
    await expect(cycle(wire, `${root}/missing`)).rejects.toThrow(/ZooKeeper error -101/); // NONODE
    await zk.create(`${root}/after`);
    await cycle(wire, `${root}/after`);
    expect(await zk.children(`${root}/after`)).toEqual([]);
    await wire.close();
  });

  it('names the server it could not reach', async () => {
    await expect(WireSession.connect('127.0.0.1:1')).rejects.toThrow(/wire session: no session with 127\.0\.0\.1:1/);
  });
});
