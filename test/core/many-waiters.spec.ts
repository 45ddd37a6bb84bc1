import { runWorker } from '../support/run-worker';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

/** Many concurrent calls on one client are normal use: Node must not warn of a listener leak. */
describe('many concurrent calls on one client', () => {
  const rootPath = uniqueRoot('crowd');
  afterAll(async () => {
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.removeTree(rootPath);
    await inspector.close();
  });

  it('withdrawing tries, waiters and contending multi-locks print no MaxListenersExceededWarning', async () => {
    const { warnings } = await runWorker<{ warnings: string[] }>('crowd.worker.ts', {
      connectionString: zkConnect(),
      rootPath,
    });
    expect(warnings).toEqual([]);
  });
});
