import diagnostics from 'node:diagnostics_channel';

import { LOCK_CHANNELS, type LostMessage, type ZkLockHandle } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

/**
 * `maxHoldMs` on ZooKeeper: what the server sees of a holder that hangs. (That the next
 * client is granted, on both backends: test/conformance/cases/max-hold.cases.ts.)
 */
describe('maxHoldMs on ZooKeeper', () => {
  let fx: LockFixture;
  const losses: LostMessage[] = [];
  const onLost = (message: unknown): void => void losses.push(message as LostMessage);
  beforeAll(async () => {
    fx = await LockFixture.create('max-hold');
    diagnostics.subscribe(LOCK_CHANNELS.lost, onLost);
  });
  afterAll(async () => {
    diagnostics.unsubscribe(LOCK_CHANNELS.lost, onLost);
    await fx.cleanup();
  });

  it("a hung holder's node is deleted from ZooKeeper after maxHoldMs, the holder told first, a lost event with reason max-hold", async () => {
    const [holder] = await fx.many(1, { identity: 'worker-7:hung' });
    const lock = await holder.acquire('hung', { maxHoldMs: 300 });
    const path = lock.path;
    const order: string[] = [];
    lock.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
    await fx.inspector.deletion(path).then(() => order.push('node deleted in ZooKeeper'));
    expect(order).toEqual(['holder told', 'node deleted in ZooKeeper']);
    expect((await fx.nodes('hung')) ?? []).toEqual([]); // the directory may go with it
    expect(losses).toEqual([
      {
        kind: 'lock',
        name: 'hung',
        mode: 'write',
        heldMs: expect.any(Number),
        reason: 'max-hold',
        why: expect.stringContaining('worker-7:hung held it longer than maxHoldMs (300 ms)'),
      },
    ]);
    expect(losses[0].heldMs).toBeGreaterThanOrEqual(300);
    await lock.release(); // the holder's late release: nothing left to delete
    expect((await fx.nodes('hung')) ?? []).toEqual([]); // the directory may go with it
  });

  it('acquireAll: every node of a hung group is deleted from ZooKeeper after maxHoldMs, the holder told first, a lost event per lock', async () => {
    losses.length = 0;
    const [holder] = await fx.many(1, { identity: 'worker-7:hung' });
    const group = await holder.acquireAll(['hung-a', { name: 'hung-b', mode: 'read' }], { maxHoldMs: 300 });
    const paths = (group.handles as ZkLockHandle[]).map((handle) => handle.path);
    const order: string[] = [];
    group.signal.addEventListener('abort', () => order.push('holder told'), { once: true });
    await Promise.all(paths.map((path) => fx.inspector.deletion(path).then(() => order.push(`${path} deleted`))));
    expect(order.slice(0, 1)).toEqual(['holder told']);
    expect(order.slice(1).sort()).toEqual(paths.map((path) => `${path} deleted`).sort());
    for (const name of ['hung-a', 'hung-b']) expect((await fx.nodes(name)) ?? []).toEqual([]);
    const lost = (name: string, mode: string) => ({
      kind: 'lock',
      name,
      mode,
      heldMs: expect.any(Number),
      reason: 'max-hold',
      why: expect.stringContaining('worker-7:hung held it longer than maxHoldMs (300 ms)'),
    });
    expect([...losses].sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      lost('hung-a', 'write'),
      lost('hung-b', 'read'),
    ]);
    await group.release(); // the holder's late release: nothing left to delete
    for (const name of ['hung-a', 'hung-b']) expect((await fx.nodes(name)) ?? []).toEqual([]);
  });
});
