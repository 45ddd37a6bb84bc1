import { setTimeout as sleep } from 'node:timers/promises';

import type { ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { WorkerProcess } from '../support/worker-process';
import { zkConnect, zkPort } from '../support/zk-test-env';

/** One line of holder.worker.ts's stdout. */
interface HolderEvent {
  event: string;
  token?: string;
  path?: string;
}

const parse = (line: string): HolderEvent => JSON.parse(line) as HolderEvent;
const isEvent = (event: string) => (line: string) => parse(line).event === event;

/**
 * `release()` answers once the delete is sent (the default, `release: "sent"`): exclusion
 * still rests on the node alone. Another process is granted only once the delete is done
 * in ZooKeeper, and `close()` right after a release leaves no node, even when the delete
 * never reached the server before the connection dropped.
 */
describe('a release answered once its delete is sent', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fx = await LockFixture.create('early-release');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterEach(() => proxy.heal());
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    await fx.cleanup();
    await proxy.stop();
  });

  const proxied = (): Promise<ZkLockBackend> => fx.backend({ connectionString: proxy.connectionString });

  it('another process is granted only once the delete is in ZooKeeper, not when release() answers', async () => {
    const client = await proxied();
    const lock = await client.acquire('handoff');
    const dir = client.pathOf('handoff');
    const next = WorkerProcess.spawn('holder.worker.ts', {
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      name: 'handoff',
      sessionTimeoutMs: 4000,
    });
    workers.push(next);
    await fx.queued('handoff', 2);

    proxy.blackhole(); // nothing this client sends reaches ZooKeeper for now
    await lock.release(); // answered: the delete is written on the session
    expect(lock.isHeld()).toBe(false);
    await sleep(1000);
    // The node is still there, so nobody else holds the lock.
    expect(await fx.inspector.children(dir)).toContain(nodeOf(lock));
    expect(next.lines.some(isEvent('held'))).toBe(false);

    proxy.heal(); // the client finds its connection dead, reconnects and deletes the node again
    const granted = parse(await next.line(isEvent('held'), 'the other process granted', 20_000));
    expect(granted.path).not.toBe(lock.path);
    expect(await fx.inspector.children(dir)).toEqual([granted.path!.slice(dir.length + 1)]);
    expect(BigInt(granted.token!)).toBeGreaterThan(lock.fencingToken);
    await lock.releaseConfirmed;
    expect(client.client.session.isLost).toBe(false);
  });

  it.each([
    ['answered', undefined],
    ['cut before it reached ZooKeeper', 'cutBefore'],
    ['cut after ZooKeeper did it', 'cutAfter'],
  ] as const)('close() right after a release, its delete %s: no node left, close ends', async (_, cut) => {
    const client = await proxied();
    const name = `close-${cut ?? 'plain'}`;
    const dir = client.pathOf(name);
    const lock = await client.acquire(name);
    const cutDone =
      cut === 'cutBefore' ? proxy.cutBefore(ZK_OP.delete, lock.path) : cut && proxy.cutAfter(ZK_OP.delete);
    await lock.release();
    await client.close();
    // Nothing left for the session timeout to clean up: the node is gone now.
    expect((await fx.inspector.children(dir)) ?? []).not.toContain(nodeOf(lock));
    await lock.releaseConfirmed;
    await cutDone;
  });
});
