import { LockUnavailableError, ZkLockBackend } from '../../lib/index';
import { resolveZkLockOptions } from '../../lib/core/zookeeper/zk-lock-options';
import { freePort } from '../support/free-port';
import { uniqueRoot } from '../support/zk-test-env';

/**
 * A client whose first connect has not succeeded yet (nothing listens at its address) was
 * never disconnected: a call that gives up meanwhile says it never connected.
 */
describe('a lock call on a client that never connected', () => {
  it('rejects with LockUnavailableError saying "never connected", not "disconnected for"', async () => {
    const backend = ZkLockBackend.unconnected(
      resolveZkLockOptions({
        connectionString: `127.0.0.1:${await freePort()}`,
        rootPath: uniqueRoot('never-connected'),
        connectTimeoutMs: 5000,
      }),
    );
    const starting = backend.start().catch((error: unknown) => error);
    try {
      const error = await backend.acquire('job', { timeoutMs: 300 }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(LockUnavailableError);
      const { message } = error as LockUnavailableError;
      expect(message).toMatch(
        /lock "job" \(write\) could not be answered: this client has never connected \(trying for \d+ ms\)/,
      );
      expect(message).not.toMatch(/disconnected for/);
      expect(error).toMatchObject({ neverConnected: true });
    } finally {
      await starting;
      await backend.close();
    }
  });
});
