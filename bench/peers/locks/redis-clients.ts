import { Redis } from 'ioredis';

import type { PeerId } from '../peer-lock.js';
import { PeerConfigError } from './peer-config-error.js';

/** `host:port` as a host and a port number; throws `PeerConfigError` for anything else. */
export function parseEndpoint(peer: PeerId, endpoint: string): { host: string; port: number } {
  const match = /^(.+):(\d+)$/.exec(endpoint);
  if (!match) throw new PeerConfigError(peer, `a Redis endpoint is "host:port", got "${endpoint}".`);
  return { host: match[1], port: Number(match[2]) };
}

/**
 * An ioredis client with ioredis's defaults (reconnects forever, queues commands while
 * disconnected, fails a command after 20 reconnection attempts), as the READMEs make
 * theirs. Its errors are heard and dropped: without a listener ioredis prints each one,
 * and reconnecting is its own business.
 */
export function openIoredis(peer: PeerId, endpoint: string): Redis {
  const client = new Redis(parseEndpoint(peer, endpoint));
  client.on('error', () => undefined);
  return client;
}

/**
 * Closes `client` for good: QUIT when connected, at once otherwise (a QUIT would wait for a
 * reconnect). Not both: `disconnect()` on a connection already closing leaves a 2 s timer.
 */
export async function closeIoredis(client: Redis): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else if (client.status !== 'end') client.disconnect();
}
