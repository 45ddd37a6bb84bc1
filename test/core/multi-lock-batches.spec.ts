import { LockFixture } from '../support/lock-fixture';
import { runWorker } from '../support/run-worker';
import { zkConnect } from '../support/zk-test-env';

describe('acquireAll on ZooKeeper: large groups', () => {
  let fx: LockFixture;

  beforeAll(async () => {
    fx = await LockFixture.create('multi-batches');
  });
  afterAll(() => fx.cleanup());

  // Jest gives each test file a copy of `process` that Node's own warnings never reach: a process of its own hears them.
  it('12 names: no MaxListenersExceededWarning, with or without a signal of the caller', async () => {
    const report = await runWorker<{ warnings: string[] }>('acquire-all-warnings.worker.ts', {
      connectionString: zkConnect(),
      rootPath: `${fx.rootPath}/warnings`,
      count: 12,
    });
    expect(report.warnings).toEqual([]);
  });
});
