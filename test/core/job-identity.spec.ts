import { hostname } from 'node:os';

import { InMemoryLockBackend, ReentrantLocker, type LockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

/** A job's run names the client's configured identity beside host:pid, on both backends. */
describe("a job's run records who ran it: identity and host:pid", () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('job-identity')));
  afterAll(() => fx.cleanup());

  it.each([
    ['ZooKeeper', () => fx.backend({ identity: 'billing-1' })],
    ['in memory', async () => new InMemoryLockBackend({ identity: 'billing-1' })],
  ] as const)('%s', async (_, make) => {
    const backend: LockBackend = await make();
    try {
      await new ReentrantLocker(backend, 10_000).withLock('nightly', () => 'ran', { holdAtLeastMs: 1 });
      const [listed] = await backend.locks('nightly');
      expect(listed).toMatchObject({
        name: 'nightly',
        lastRun: { by: `${hostname()}:${process.pid}`, identity: 'billing-1', outcome: 'ok' },
      });
    } finally {
      await backend.close();
    }
  });
});
