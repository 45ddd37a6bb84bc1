import type { SessionMessage } from './diagnostics.js';

/**
 * What is true now, for readers that start after the locks and sessions did (metrics
 * registered once the application is up): the channels only tell changes. Kept on
 * `globalThis` under a registered symbol, so that a CommonJS and an ESM copy of this
 * package loaded side by side count together, as their channels (global names) do.
 */
interface LockActivity {
  /** Locks and leases granted by this process and not released yet (a lost one until its release). */
  held: number;
  /** The state of each open client's session, by client. */
  readonly sessions: Map<object, SessionMessage['state']>;
}

const KEY = Symbol.for('nestjs-zk-lock.activity');

function activity(): LockActivity {
  const global = globalThis as { [KEY]?: LockActivity };
  return (global[KEY] ??= { held: 0, sessions: new Map() });
}

export function countGrant(): void {
  activity().held += 1;
}

export function countRelease(): void {
  activity().held -= 1;
}

export function noteSessionState(client: object, state: SessionMessage['state']): void {
  if (state === 'closed') activity().sessions.delete(client);
  else activity().sessions.set(client, state);
}

/** Locks and leases held now by this process. */
export function heldNow(): number {
  return activity().held;
}

/** True when at least one client is open and every open client's session is connected and trusted. */
export function sessionsUp(): boolean {
  const { sessions } = activity();
  if (sessions.size === 0) return false;
  for (const state of sessions.values()) if (state !== 'connected' && state !== 'recovered') return false;
  return true;
}
