import type { ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { describeLockBackendConformance } from './lock-backend.conformance';

describeLockBackendConformance('ZooKeeper', async () => {
  const fx = await LockFixture.create('conformance');
  return {
    backends: (count) => fx.many(count),
    keepingIdleNames: (count) => fx.many(count, { removeEmptyDirectories: false }),
    losable: () => fx.expirable(),
    lose: async (backend, held) => {
      await fx.expire(backend as ZkLockBackend);
      await waitUntil(() => held.signal.aborted, 'the holder learns its lock is lost');
    },
    releasesConfirmed: () => fx.releasesConfirmed(),
    cleanup: () => fx.cleanup(),
  };
});
