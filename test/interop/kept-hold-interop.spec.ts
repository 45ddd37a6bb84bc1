import { ReentrantLocker } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { KEPT_HOLD_MARKER } from '../support/node-names';
import { zkConnect } from '../support/zk-test-env';
import { CuratorClient } from './curator-client';
import { KazooClient } from './kazoo-client';

const HOLD_MS = 2_000;

/**
 * What Kazoo and Curator make of a kept hold's marker (see lib/core/port/kept-hold.ts): its
 * name sorts before every sequence number in their orders, so they queue behind it as
 * behind a writer, and take the lock once its holder deletes it at the hold's end.
 */
describe('kept holds as Kazoo and Curator see them', () => {
  let fx: LockFixture;
  let kazoo: KazooClient;
  let curator: CuratorClient;
  beforeAll(async () => {
    fx = await LockFixture.create('kept-hold-interop');
    [kazoo, curator] = await Promise.all([KazooClient.start(zkConnect()), CuratorClient.start(zkConnect())]);
  });
  afterAll(async () => {
    await Promise.all([kazoo?.stop(), curator?.stop()]);
    await fx.cleanup();
  });

  /** Runs a job on `name` that leaves a kept hold of HOLD_MS; resolves when its function started. */
  const keptHold = async (name: string): Promise<number> => {
    // Kazoo's Lock creates its directory once and fails with NoNodeError if it vanishes.
    const ours = await fx.backend({ removeEmptyDirectories: false });
    let startedAt = 0;
    await new ReentrantLocker(ours, 10_000).withLock(name, () => void (startedAt = performance.now()), {
      holdAtLeastMs: HOLD_MS,
    });
    expect(await fx.nodes(name)).toEqual([expect.stringMatching(KEPT_HOLD_MARKER)]);
    return startedAt;
  };

  it('Kazoo: Lock and ReadLock are refused during the hold, a blocking Lock gets it after its end; contenders() shows the marker', async () => {
    const startedAt = await keptHold('kazoo-tick');
    const path = (await fx.backend()).pathOf('kazoo-tick');
    expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: false })).toMatchObject({ acquired: false });
    expect(await kazoo.send({ op: 'acquire', kind: 'read', path, blocking: false })).toMatchObject({ acquired: false });
    const [shown] = (await kazoo.send({ op: 'contenders', kind: 'lock', path })).contenders as string[];
    expect(JSON.parse(shown)).toMatchObject({ kind: 'nestjs-zk-lock/kept-hold' });

    expect(await kazoo.send({ op: 'acquire', kind: 'lock', path, blocking: true, timeout: 10 })).toMatchObject({
      acquired: true,
    });
    expect(performance.now()).toBeGreaterThanOrEqual(startedAt + HOLD_MS);
    await kazoo.send({ op: 'release', path });
  });

  it('Curator: InterProcessMutex and both InterProcessReadWriteLock modes are refused during the hold, the mutex gets it after its end', async () => {
    const startedAt = await keptHold('curator-tick');
    const path = (await fx.backend()).pathOf('curator-tick');
    await curator.lock('m', 'mutex', path);
    await curator.lock('rw', 'rw', path);
    expect(await curator.acquire('m', 'mutex', 0)).toBe(false);
    expect(await curator.acquire('rw', 'read', 0)).toBe(false);
    expect(await curator.acquire('rw', 'write', 0)).toBe(false);

    expect(await curator.acquire('m', 'mutex', 10_000)).toBe(true);
    expect(performance.now()).toBeGreaterThanOrEqual(startedAt + HOLD_MS);
    await curator.release('m', 'mutex');
  });
});
