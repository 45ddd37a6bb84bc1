import { RETIRE_SEQUENCE } from '../../lib/core/port/lock-node';
import { LockTimeoutError, ZkLockBackend } from '../../lib/index';
import { setChildCounter } from '../support/zookeeper/set-child-counter';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { ZkServer } from '../support/zookeeper/zk-server';

const seq = (path: string): number => Number(path.slice(-10));

/**
 * A semaphore whose directory's sequence counter nears its limit is retired as a lock's
 * is: nodes numbered past the safe range are never granted, the directory drains, and it
 * is made again (with its number of leases) so that numbering starts at 0.
 */
describe('a lease semaphore at the sequence-number limit', () => {
  const server = new ZkServer({ tickTime: 200 });
  const rootPath = '/lease-seq-limit';
  const backends: ZkLockBackend[] = [];
  let inspector: ZkInspector;

  const connect = async (): Promise<ZkLockBackend> => {
    const backend = await ZkLockBackend.connect({
      connectionString: server.connectionString,
      rootPath,
      sessionTimeoutMs: 4000,
      emptyDirectoryGraceMs: 0,
      removeEmptyDirectories: false,
    });
    backends.push(backend);
    return backend;
  };

  beforeAll(async () => {
    await server.start();
    const setup = await connect();
    await (await setup.acquireLease('pool', { maxLeases: 2 })).release(); // the directory, with its count
    await setup.close();
    await setChildCounter(server, `${rootPath}/pool`, RETIRE_SEQUENCE - 1);
    inspector = await ZkInspector.connect(server.connectionString);
  });
  afterAll(async () => {
    await Promise.allSettled(backends.map((backend) => backend.close()));
    await inspector.close();
    await server.destroy();
  });

  it('past the safe range nobody is granted; once drained the directory is made again, numbering from 0', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const held = await a.acquireLease('pool', { maxLeases: 2, timeoutMs: 5000 });
    expect(seq(held.path)).toBe(RETIRE_SEQUENCE - 1); // the last number still granted

    // A lease is free, but B's node is numbered past the safe range: B withdraws and waits
    // for the directory to drain; a try meanwhile fails at once.
    const waiting = b.acquireLease('pool', { maxLeases: 2, timeoutMs: 20_000 });
    await expect(c.acquireLease('pool', { maxLeases: 2, timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    const dir = a.pathOf('pool');
    expect(await inspector.children(dir)).toEqual([held.path.slice(dir.length + 1)]);

    await held.release();
    const lease = await waiting;
    expect(seq(lease.path)).toBe(0);
    expect(JSON.parse((await inspector.data(dir))!)).toEqual({ kind: 'nestjs-zk-lock/lease', maxLeases: 2 });
    const second = await c.acquireLease('pool', { maxLeases: 2, timeoutMs: 0 });
    expect(seq(second.path)).toBe(1);
    await expect(a.acquireLease('pool', { maxLeases: 2, timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await Promise.all([lease.release(), second.release()]);
  });
});
