import { LockFixture } from '../support/lock-fixture';
import { zkConnect } from '../support/zk-test-env';
import { KazooClient } from './kazoo-client';

/**
 * Python services using Kazoo 2.8 (Debian's python3-kazoo) share locks with this
 * library: same node names, same queue, same read/write rules. A lock name made of safe
 * characters is its own directory, so both sides use `<rootPath>/<name>`.
 */
describe('interoperability with Kazoo', () => {
  let fx: LockFixture;
  let kazoo: KazooClient;
  beforeAll(async () => {
    fx = await LockFixture.create('kazoo');
    kazoo = await KazooClient.start(zkConnect());
  });
  afterAll(async () => {
    await kazoo.stop();
    await fx.cleanup();
  });

  // Kazoo's Lock creates its directory once and fails with NoNodeError if it vanishes.
  const options = { removeEmptyDirectories: false, identity: 'node-service' };

  it('a Kazoo Lock and our write lock exclude each other and queue in one line', async () => {
    const [ours] = await fx.many(1, options);
    const path = ours.pathOf('shared-job');

    expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: false })).toMatchObject({ acquired: true });
    expect(await ours.tryAcquire('shared-job')).toBeNull();
    const waiting = ours.acquire('shared-job', { timeoutMs: 10_000 });
    await fx.queued('shared-job', 2);
    expect((await ours.contenders('shared-job')).map((c) => [c.mode, c.holding, c.identity])).toEqual([
      ['write', true, 'kazoo-worker'],
      ['write', false, 'node-service'],
    ]);
    expect((await kazoo.send({ op: 'contenders', kind: 'lock', path })).contenders).toEqual([
      'kazoo-worker',
      'node-service',
    ]);
    await kazoo.send({ op: 'release', path });
    const lock = await waiting;

    expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: false })).toMatchObject({ acquired: false });
    const kazooWaits = kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: true, timeout: 10 });
    await fx.queued('shared-job', 2); // the Kazoo process is blocked in acquire() now
    await lock.release();
    expect(await kazooWaits).toMatchObject({ acquired: true });
    await kazoo.send({ op: 'release', path });
  });

  it('read and write locks mix across the two libraries', async () => {
    const [ours] = await fx.many(1, options);
    const path = ours.pathOf('report');

    // Kazoo reader + our reader hold together; our writer waits for the Kazoo reader.
    expect(await kazoo.send({ op: 'acquire', kind: 'read', path, blocking: false })).toMatchObject({ acquired: true });
    const reader = await ours.acquire('report', { mode: 'read', timeoutMs: 0 });
    await reader.release();
    expect(await ours.tryAcquire('report')).toBeNull();
    await kazoo.send({ op: 'release', path });

    // Our writer holds: a Kazoo ReadLock and WriteLock must both be refused.
    const writer = await ours.acquire('report', { timeoutMs: 0 });
    expect(await kazoo.send({ op: 'acquire', kind: 'read', path, blocking: false })).toMatchObject({ acquired: false });
    expect(await kazoo.send({ op: 'acquire', kind: 'write', path, blocking: false })).toMatchObject({
      acquired: false,
    });
    await writer.release();
    await writer.releaseConfirmed;
    expect(await kazoo.send({ op: 'acquire', kind: 'write', path, blocking: false })).toMatchObject({ acquired: true });
    expect(await ours.tryAcquire('report', { mode: 'read' })).toBeNull();
    await kazoo.send({ op: 'release', path });
    expect(await fx.nodes('report')).toEqual([]); // empty, and kept for Kazoo
  });

  it.each(['curator-mutex', 'curator-rw'] as const)(
    'ours in %s waits for a Kazoo holder, but Kazoo does not see ours (docs/interoperability.md says: not safe)',
    async (nodeFormat) => {
      const [ours] = await fx.many(1, options);
      const name = `formats-${nodeFormat}`;
      const path = ours.pathOf(name);
      expect(await kazoo.send({ op: 'acquire', kind: 'write', path, blocking: false })).toMatchObject({
        acquired: true,
      });
      expect(await ours.tryAcquire(name, { nodeFormat })).toBeNull();
      await kazoo.send({ op: 'release', path });

      const lock = await ours.acquire(name, { nodeFormat, timeoutMs: 0 });
      // Kazoo sorts names that are not its own last: its WriteLock holds beside our writer.
      expect(await kazoo.send({ op: 'acquire', kind: 'write', path, blocking: false })).toMatchObject({
        acquired: true,
      });
      expect((await ours.contenders(name)).map((c) => [c.format, c.holding])).toEqual([
        [nodeFormat, true],
        ['kazoo', false],
      ]);
      await kazoo.send({ op: 'release', path });
      await lock.release();
      expect(await fx.nodes(name)).toEqual([]);
    },
  );
});
