import type { ZkClient } from './zk-client.js';

/**
 * Where a client's ZooKeeper session stands: `connected` (and trusted: locks granted now
 * are safe), `disconnected` (reconnecting, held locks still valid; or the session was
 * given back after it was declared lost and the nodes it left are being deleted), `at-risk` (no recent
 * proof that the leader hears it: held locks are reported lost), `lost` (a new session is
 * being opened), `closed`, or `not-started` (connects on first use).
 */
export type ZkSessionState = 'not-started' | 'connected' | 'disconnected' | 'at-risk' | 'lost' | 'closed';

export interface ZkSessionStatus {
  readonly state: ZkSessionState;
  /** The session id, in hex as ZooKeeper's logs show it (`0x…`); absent before the first connect. */
  readonly sessionId?: string;
  /** The server connected to now, `host:port`. */
  readonly server?: string;
  /** How long ago the leader last proved to have heard from the session, in ms. */
  readonly provenAgoMs?: number;
  /** The session timeout the server granted, in ms. */
  readonly timeoutMs?: number;
}

/** A snapshot of `client`'s session, read at this moment (the clock is checked, as a lock's `isHeld()` does). */
export function sessionStatus(client: ZkClient): ZkSessionStatus {
  if (client.isClosed) return { state: 'closed' };
  if (!client.isStarted) return { state: 'not-started' };
  const session = client.session;
  const state = session.isLost
    ? 'lost'
    : !session.checkTrust()
      ? 'at-risk'
      : session.isConnected
        ? 'connected'
        : 'disconnected';
  return {
    state,
    ...(session.id && { sessionId: `0x${session.id}` }),
    ...(session.server && { server: session.server }),
    provenAgoMs: Math.max(0, Math.round(performance.now() - session.provenAt)),
    timeoutMs: session.timeoutMs,
  };
}
