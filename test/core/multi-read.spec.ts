import type { ZkLockBackend, ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { MULTI_READ_OP, OldServerProxy, type SrvrAnswer } from '../support/zookeeper/old-server.proxy';

const NAMES = ['a', 'b', 'c', 'd', 'e'];

describe('multiRead on ZooKeeper 3.8: several reads, one request', () => {
  let fx: LockFixture;
  let backend: ZkLockBackend;
  const path = (name: string): string => `${fx.rootPath}/${name}`;

  beforeAll(async () => {
    fx = await LockFixture.create('multi-read');
    backend = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    await fx.inspector.create(fx.rootPath);
    await fx.inspector.create(path('x'));
    for (const child of ['c2', 'c1', 'ünï']) await fx.inspector.create(`${path('x')}/${child}`);
    await fx.inspector.create(path('y'), 'hello');
  });
  afterAll(() => fx.cleanup());

  it('asks the server its version once, then reads each node as one read each would, and each op fails on its own', async () => {
    const session = backend.client.liveSession();
    expect(session.canReadTogether()).toBe(false); // not known yet: asks in the background
    await session.readyToReadTogether();
    expect(session.canReadTogether()).toBe(true);
    expect(session.readyToReadTogether()).toBeUndefined();

    const before = backend.client.counter.snapshot();
    const results = await session.multiRead([
      { op: 'getChildren', path: path('x') },
      { op: 'getData', path: path('x') },
      { op: 'getData', path: path('y') },
      { op: 'getChildren', path: path('missing') },
      { op: 'getData', path: path('missing') },
      { op: 'getChildren', path: path('y') },
    ]);
    expect(countsSince(backend, before)).toEqual({ multiRead: 1 });

    const x = await session.getChildren(path('x'));
    const y = await session.getDataAndStat(path('y'));
    expect(results).toEqual([
      { children: expect.arrayContaining(x.children) as unknown },
      { data: Buffer.alloc(0), stat: x.stat },
      { data: Buffer.from('hello'), stat: y.stat },
      { error: 'NO_NODE' },
      { error: 'NO_NODE' },
      { children: [] },
    ]);
    expect((results[0] as { children: string[] }).children).toHaveLength(3);
    // And the stat is ZooKeeper's own, as another client reads it.
    expect(x.stat.pzxid).toBe(await fx.inspector.childrenZxid(path('x')));
  });

  it('under a chroot, paths are within it', async () => {
    const chrooted = await fx.backend({ connectionString: `${zkConnect()}${fx.rootPath}`, rootPath: '/locks' });
    const session = chrooted.client.liveSession();
    await session.readyToReadTogether();
    expect(session.canReadTogether()).toBe(true);
    const [children, data] = await session.multiRead([
      { op: 'getChildren', path: '/x' },
      { op: 'getData', path: '/y' },
    ]);
    expect(children).toEqual({ children: expect.arrayContaining(['c1', 'c2', 'ünï']) as unknown });
    expect(data).toMatchObject({ data: Buffer.from('hello') });
  });

  it("acquireAll reads every directory in one multiRead, and each lock's token is its directory's pzxid", async () => {
    await (await backend.acquireAll(NAMES)).release(); // the directories exist from now on
    await backend.client.liveSession().readyToReadTogether();
    const before = backend.client.counter.snapshot();
    const group = await backend.acquireAll(NAMES);
    expect(countsSince(backend, before)).toEqual({ multi: 1, multiRead: 1 });
    for (const [i, name] of NAMES.entries()) {
      const handle = group.handles[i] as ZkLockHandle;
      expect(await fx.nodes(name, backend)).toEqual([nodeOf(handle)]);
      expect(handle.fencingToken).toBe(await fx.inspector.childrenZxid(backend.pathOf(name)));
    }
    await group.release();
    for (const name of NAMES) expect(await fx.nodes(name, backend)).toEqual([]);
  });
});

describe.each<[string, SrvrAnswer]>([
  [
    'ZooKeeper 3.5',
    { reply: 'Zookeeper version: 3.5.10-c2a6ba5e7d4f3bd1d2c5a49dc6bfcf9bd1b0b1e9, built on 2022-05-30 08:39 UTC\n' },
  ],
  ['srvr not whitelisted', { reply: 'srvr is not executed because it is not in the whitelist.\n' }],
  ['no answer to srvr', 'silence'],
])('a server that does not say it takes a multiRead (%s)', (_, srvr) => {
  let fx: LockFixture;
  let proxy: OldServerProxy;
  let backend: ZkLockBackend;

  beforeAll(async () => {
    fx = await LockFixture.create('multi-read-old');
    proxy = new OldServerProxy(zkPort(), srvr);
    await proxy.start();
    backend = await fx.backend({ connectionString: proxy.connectionString, emptyDirectoryGraceMs: 60_000 });
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  it('is asked once and sent none: the reads go one by one', async () => {
    await (await backend.acquireAll(NAMES)).release(); // the directories exist from now on
    for (let round = 0; round < 3; round++) {
      await backend.client.liveSession().readyToReadTogether();
      const before = backend.client.counter.snapshot();
      const group = await backend.acquireAll(NAMES);
      expect(countsSince(backend, before)).toMatchObject({ multi: 1, getChildren: 5 });
      await group.release();
    }
    expect(backend.client.liveSession().canReadTogether()).toBe(false);
    expect(proxy.srvrAsked).toBe(1);
    expect(proxy.ops).not.toContain(MULTI_READ_OP);
    expect(await fx.tree()).toEqual(expect.not.arrayContaining([expect.stringMatching(/lock-/)]));
  });
});

describe('a server that refuses a multiRead after saying 3.6 (say, a 3.5 behind the same address)', () => {
  let fx: LockFixture;
  let proxy: OldServerProxy;
  let backend: ZkLockBackend;

  beforeAll(async () => {
    fx = await LockFixture.create('multi-read-refused');
    proxy = new OldServerProxy(
      zkPort(),
      { reply: 'Zookeeper version: 3.6.3--1, built on 04/08/2021 16:35 GMT\n' },
      true,
    );
    await proxy.start();
    backend = await fx.backend({ connectionString: proxy.connectionString, emptyDirectoryGraceMs: 60_000 });
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  it('closes the connection on it, as 3.5 does: the acquire still succeeds, and that server gets no other', async () => {
    await (await backend.acquireAll(NAMES)).release(); // the directories exist from now on
    await backend.client.liveSession().readyToReadTogether();
    expect(backend.client.liveSession().canReadTogether()).toBe(true);

    const group = await backend.acquireAll(NAMES); // its multiRead is refused, the connection closed
    expect(proxy.ops.filter((op) => op === MULTI_READ_OP)).toHaveLength(1);
    for (const [i, name] of NAMES.entries())
      expect(await fx.nodes(name, backend)).toEqual([nodeOf(group.handles[i] as ZkLockHandle)]);
    expect(group.handles.every((handle) => handle.isHeld())).toBe(true);
    await group.release();
    for (const name of NAMES) expect(await fx.nodes(name, backend)).toEqual([]);

    expect(backend.client.liveSession().canReadTogether()).toBe(false);
    const before = backend.client.counter.snapshot();
    await (await backend.acquireAll(NAMES)).release();
    expect(countsSince(backend, before)).toMatchObject({ multi: 2, getChildren: 5 });
    expect(proxy.ops.filter((op) => op === MULTI_READ_OP)).toHaveLength(1);
    expect(proxy.srvrAsked).toBe(1);
  });
});
