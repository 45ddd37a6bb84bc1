import { encodeLockName } from '../../../lib/core/naming/lock-name-codec.js';
import type { PeerId } from '../peer-lock.js';

/** Where ours keeps its locks: the library's default root, named so `zkLockDirOf` agrees with it. */
export const OURS_ROOT_PATH = '/locks';

/** The class of murlock's peer service (./murlock.ts): murlock's default lock key begins with it. */
export const MURLOCK_SERVICE_NAME = 'MurlockPeerService';

/**
 * The Redis key a Redis peer keeps while `key` is held (on each of its servers), for a test
 * or a fault trial to look at; undefined for `ours`, whose locks are ZooKeeper nodes
 * (`zkLockDirOf`).
 */
export function redisKeyOf(id: PeerId, key: string): string | undefined {
  switch (id) {
    case 'ours':
      return undefined;
    case 'redlock-1':
    case 'redlock-3':
    case 'nest-redlock':
      return key;
    case 'redis-semaphore':
      return `mutex:${key}`;
    case 'murlock':
      return `${MURLOCK_SERVICE_NAME}:run:${key}`; // its default lockKeyPrefix: class and method names
  }
}

/** The ZooKeeper folder holding ours's lock nodes for `key`. */
export function zkLockDirOf(key: string): string {
  return `${OURS_ROOT_PATH}/${encodeLockName(key)}`;
}
