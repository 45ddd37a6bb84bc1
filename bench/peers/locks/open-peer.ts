import type { PeerConfig, PeerLock } from '../peer-lock.js';

/**
 * Opens the peer `config.id` names, connected to its servers. Each lock's module is loaded
 * only when asked for, so a worker hosting one lock loads no other (nor Nest, for the
 * plain ones).
 */
export async function openPeer(config: PeerConfig): Promise<PeerLock> {
  switch (config.id) {
    case 'ours':
      return (await import('./ours.js')).openOurs(config);
    case 'redlock-1':
    case 'redlock-3':
      return (await import('./redlock.js')).openRedlock(config);
    case 'redis-semaphore':
      return (await import('./redis-semaphore.js')).openRedisSemaphore(config);
    case 'nest-redlock':
      return (await import('./nest-redlock.js')).openNestRedlock(config);
    case 'murlock':
      return (await import('./murlock.js')).openMurlock(config);
  }
}
