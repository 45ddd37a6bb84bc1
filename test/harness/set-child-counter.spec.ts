import * as zookeeper from 'node-zookeeper-client';

import { setChildCounter } from '../support/zookeeper/set-child-counter';
import { ZkServer } from '../support/zookeeper/zk-server';
import { closeRawClient, createNode, errorCode, openRawClient, statOf, type RawClient } from './raw-client';

const { PERSISTENT, PERSISTENT_SEQUENTIAL, EPHEMERAL_SEQUENTIAL } = zookeeper.CreateMode;
const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** The sequence suffix ZooKeeper appended (`%010d` of the counter), as text: names here end in `_`. */
const suffixOf = (path: string): string => path.slice(path.lastIndexOf('_') + 1);

/**
 * What clients read as `Stat.cversion`: the server stores the number of child creates and
 * reports `2 × creates − children` (DataNode.copyStat, "v3 semantics"), in 32 bits.
 */
const clientCversion = (stored: number, numChildren: number): number => (stored * 2 - numChildren) | 0;

const pzxidOf = (stat: zookeeper.Stat | undefined): string => stat!.pzxid.toString('hex');

function children(client: zookeeper.Client, path: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    client.getChildren(path, (error, names) => (error ? reject(error) : resolve(names.sort()))),
  );
}

function remove(client: zookeeper.Client, path: string): Promise<void> {
  return new Promise((resolve, reject) => client.remove(path, (error) => (error ? reject(error) : resolve())));
}

/** One multi request with a create per name: one request, one txn, sub-ops prepared in order. */
function createInOneMulti(client: zookeeper.Client, paths: string[]): Promise<string[]> {
  const transaction = client.transaction();
  for (const path of paths) transaction.create(path, Buffer.from(''), EPHEMERAL_SEQUENTIAL);
  return new Promise((resolve, reject) =>
    transaction.commit((error, results: { path: string }[]) =>
      error ? reject(error) : resolve(results.map((result) => result.path)),
    ),
  );
}

describe('setChildCounter (sets a znode’s child counter on a standalone server of its own)', () => {
  const server = new ZkServer({ tickTime: 200 });
  let raw: RawClient | undefined;

  const connect = async (): Promise<zookeeper.Client> => {
    raw = await openRawClient(server.connectionString);
    return raw.client;
  };
  const disconnect = async (): Promise<void> => {
    if (raw?.client.getState() === zookeeper.State.SYNC_CONNECTED) await closeRawClient(raw.client);
    raw = undefined;
  };

  beforeAll(() => server.start());
  afterAll(async () => {
    await disconnect();
    await server.destroy();
  });

  it('restarts the same server with its data, and the next sequential child gets the counter as suffix', async () => {
    let client = await connect();
    await createNode(client, '/dir', PERSISTENT);
    const kept: string[] = [];
    for (let i = 0; i < 3; i++) kept.push(await createNode(client, '/dir/kept_', PERSISTENT_SEQUENTIAL));
    expect(kept).toEqual(['/dir/kept_0000000000', '/dir/kept_0000000001', '/dir/kept_0000000002']);
    const before = await statOf(client, '/dir');
    expect(before?.cversion).toBe(clientCversion(3, 3));
    await disconnect();

    const port = server.clientPort;
    const pid = server.pid;
    await setChildCounter(server, '/dir', 2147483640);
    expect(server.running).toBe(true);
    expect(server.clientPort).toBe(port);
    expect(server.pid).not.toBe(pid);
    expect(await server.mode()).toBe('standalone');

    client = await connect();
    expect(await children(client, '/dir')).toEqual(['kept_0000000000', 'kept_0000000001', 'kept_0000000002']);
    const after = await statOf(client, '/dir');
    expect(after?.numChildren).toBe(3);
    expect(pzxidOf(after)).toBe(pzxidOf(before)); // only the counter changed
    expect(after?.cversion).toBe(clientCversion(2147483640, 3)); // = -19 as clients see it

    expect(await createNode(client, '/dir/e0_', EPHEMERAL_SEQUENTIAL)).toBe('/dir/e0_2147483640');
  });

  it('past 2^31 − 1 ZooKeeper repeats 2147483647 for serial creates and goes negative for pipelined ones', async () => {
    const client = raw!.client;
    const serial: string[] = [];
    for (let i = 1; i <= 7; i++) serial.push(suffixOf(await createNode(client, `/dir/e${i}_`, EPHEMERAL_SEQUENTIAL)));
    expect(serial).toEqual([
      '2147483641',
      '2147483642',
      '2147483643',
      '2147483644',
      '2147483645',
      '2147483646',
      '2147483647',
    ]);

    // The counter is now Integer.MAX_VALUE. A create prepares MAX + 1 = Integer.MIN_VALUE as the
    // parent's new counter, and DataTree.createNode applies it only if it is larger: it never is,
    // so the stored counter stays at MAX and the parent's pzxid stops moving on creates.
    const atLimit = await statOf(client, '/dir');
    const repeated: string[] = [];
    for (let i = 8; i <= 10; i++)
      repeated.push(suffixOf(await createNode(client, `/dir/e${i}_`, EPHEMERAL_SEQUENTIAL)));
    expect(repeated).toEqual(['2147483647', '2147483647', '2147483647']);
    const stuck = await statOf(client, '/dir');
    expect(pzxidOf(stuck)).toBe(pzxidOf(atLimit));
    expect(stuck?.cversion).toBe(clientCversion(INT32_MAX, stuck!.numChildren));
    // Two children with the same prefix now collide instead of getting two numbers.
    const again = await createNode(client, '/dir/e10_', EPHEMERAL_SEQUENTIAL).catch((error: unknown) => error);
    expect(errorCode(again)).toBe(zookeeper.Exception.NODE_EXISTS);

    // Within one request (a multi) each create sees the counter the previous one prepared:
    // MAX, then MIN, then MIN + 1 (ZooKeeper's %010d of a negative int: 11 characters).
    const multi = await createInOneMulti(client, ['/dir/m0_', '/dir/m1_', '/dir/m2_']);
    expect(multi.map(suffixOf)).toEqual(['2147483647', '-2147483648', '-2147483647']);

    // Pipelined creates (sent without waiting) do the same while the previous one is still
    // outstanding in the PrepRequestProcessor, else they read MAX from the tree again; which of
    // the two happens is timing. Each suffix is MAX or the previous suffix + 1, wrapping.
    const pipelined = (
      await Promise.all(Array.from({ length: 10 }, (_, i) => createNode(client, `/dir/p${i}_`, EPHEMERAL_SEQUENTIAL)))
    ).map((path) => Number(suffixOf(path)));
    expect(pipelined[0]).toBe(INT32_MAX);
    pipelined.forEach((value, i) => {
      if (i > 0)
        expect([INT32_MAX, pipelined[i - 1] === INT32_MAX ? INT32_MIN : pipelined[i - 1] + 1]).toContain(value);
    });

    // Deletes still move pzxid (they never moved the stored counter).
    const beforeDelete = await statOf(client, '/dir');
    await remove(client, '/dir/e10_2147483647');
    expect(pzxidOf(await statOf(client, '/dir'))).not.toBe(pzxidOf(beforeDelete));
    expect((await statOf(client, '/dir'))?.cversion).toBe(clientCversion(INT32_MAX, beforeDelete!.numChildren - 1));
  });

  it('an ordinary restart replays the later log on top of the rewritten snapshot: still stuck at the limit', async () => {
    await disconnect(); // its ephemerals go
    await server.stop();
    await server.start();
    const client = await connect();
    expect(await children(client, '/dir')).toEqual(['kept_0000000000', 'kept_0000000001', 'kept_0000000002']);
    expect((await statOf(client, '/dir'))?.cversion).toBe(clientCversion(INT32_MAX, 3));
    expect(await createNode(client, '/dir/r_', EPHEMERAL_SEQUENTIAL)).toBe('/dir/r_2147483647');
  });

  it('can lower the counter as well, and fails cleanly (server serving again) on a missing znode', async () => {
    await disconnect();
    await setChildCounter(server, '/dir', 100);
    let client = await connect();
    expect(await createNode(client, '/dir/low_', EPHEMERAL_SEQUENTIAL)).toBe('/dir/low_0000000100');
    expect(await createNode(client, '/dir/low_', EPHEMERAL_SEQUENTIAL)).toBe('/dir/low_0000000101');
    await disconnect();

    await expect(setChildCounter(server, '/dir', 2 ** 31)).rejects.toThrow(RangeError);
    await expect(setChildCounter(server, '/no-such-node', 1)).rejects.toThrow(/no znode \/no-such-node/);
    expect(await server.mode()).toBe('standalone');
    client = await connect();
    expect(await createNode(client, '/dir/low_', EPHEMERAL_SEQUENTIAL)).toBe('/dir/low_0000000102');
  });
});
