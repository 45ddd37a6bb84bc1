import type { PeerId } from '../peer-lock.js';

/** A `PeerConfig` a peer cannot be opened with (a wrong number of endpoints, a malformed one). */
export class PeerConfigError extends Error {
  constructor(
    readonly peer: PeerId,
    problem: string,
  ) {
    super(`Cannot open peer "${peer}": ${problem}`);
    this.name = 'PeerConfigError';
  }
}

/** The one endpoint of a peer that takes one Redis server; throws `PeerConfigError` otherwise. */
export function oneEndpoint(peer: PeerId, endpoints: readonly string[]): string {
  if (endpoints.length !== 1)
    throw new PeerConfigError(peer, `it takes one Redis server ("host:port"), got ${endpoints.length}.`);
  return endpoints[0];
}
