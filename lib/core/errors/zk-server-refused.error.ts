import type { ServerUnfitness } from '../zookeeper/session/server-check.js';
import { lockMessages } from './messages.js';
import { ZkConnectionError } from './zk-connection.error.js';

/**
 * A server the lock's liveness proof does not hold through (docs/fencing.md): an observer,
 * or one that granted a session timeout under 2 × its tickTime. The client leaves it for
 * another server; `start()` fails with this error when no other server would do in time.
 */
export class ZkServerRefusedError extends ZkConnectionError {
  /** Why: the server's own words, from `srvr` (observer) or `conf` (tickTime, minSessionTimeout). */
  readonly unfitness: ServerUnfitness;

  constructor(
    readonly server: string,
    unfitness: ServerUnfitness,
    readonly sessionTimeoutMs: number,
    connectionString: string,
  ) {
    super(
      unfitness.reason === 'observer'
        ? lockMessages.observerRefused(server)
        : lockMessages.shortTimeoutRefused(
            server,
            sessionTimeoutMs,
            unfitness.tickTimeMs,
            unfitness.minSessionTimeoutMs,
          ),
      connectionString,
    );
    this.unfitness = unfitness;
  }
}
