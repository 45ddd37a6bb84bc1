import { ReentrantLocker, ZkLockBackend } from '../../../lib/index.js';
import type { PeerConfig, PeerHold, PeerLock } from '../peer-lock.js';
import { OURS_ROOT_PATH } from './lock-keys.js';

/**
 * This library's core on ZooKeeper: `ZkLockBackend.connect` with the config's session
 * timeout (the library's default 10 s when none), and `ReentrantLocker.withLock`, the core's
 * public "acquire, run, release" that hands the body its handle (what `LockService.withLock`
 * and `@WithLock` run in a Nest app). The hold is the handle's own: its fencing token,
 * `isHeld()` (which also checks the clock against the session timeout) and `signal`.
 * `run` rejects with `LockTimeoutError` when the lock is not had within
 * `acquireTimeoutMs`, and with `LockLostError` when it was lost while the body ran.
 */
export async function openOurs(config: PeerConfig): Promise<PeerLock> {
  const backend = await ZkLockBackend.connect({
    connectionString: config.endpoints.join(','),
    rootPath: OURS_ROOT_PATH,
    ...(config.ttlMs === undefined ? {} : { sessionTimeoutMs: config.ttlMs }),
  });
  const locker = new ReentrantLocker(backend, config.acquireTimeoutMs);
  return {
    id: 'ours',
    run: (key, body) =>
      locker.withLock(key, (handle) => {
        const hold: PeerHold = { token: handle.fencingToken, signal: handle.signal, isHeld: () => handle.isHeld() };
        return body(hold);
      }),
    close: () => backend.close(),
  };
}
