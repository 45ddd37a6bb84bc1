import { channel, tracingChannel } from 'node:diagnostics_channel';
import { LockAbortedError, LockTimeoutError } from '../errors/errors.js';

/**
 * What the ZooKeeper backend publishes on `node:diagnostics_channel`, for metrics and traces
 * without a dependency (OpenTelemetry: `nestjs-zk-lock/otel`). Nothing is built or sent when
 * no one subscribes. Channel names carry the package's name.
 */
export const LOCK_CHANNELS = {
  /** A tracing channel (`start`, `end`, `asyncStart`, `asyncEnd`, `error`) around each acquire: `AcquireMessage`. */
  acquire: 'nestjs-zk-lock:acquire',
  /** A lock or lease released by its holder: `ReleaseMessage`. */
  release: 'nestjs-zk-lock:release',
  /** A held lock or lease lost (its signal aborted): `LostMessage`. */
  lost: 'nestjs-zk-lock:lost',
  /** The session's state changed: `SessionMessage`. */
  session: 'nestjs-zk-lock:session',
} as const;

export type EventLockKind = 'lock' | 'lease' | 'group';
/** `taken`: a try (`tryAcquire`, `timeoutMs: 0`) found it held; `timeout`, `aborted`, or another `error`. */
export type AcquireOutcome = 'granted' | 'taken' | 'timeout' | 'aborted' | 'error';

export interface AcquireMessage {
  readonly kind: EventLockKind;
  /** The lock's name (a group's names joined with `, `). */
  readonly name: string;
  /** A group's is `mixed` when its locks' modes differ. */
  readonly mode: 'read' | 'write' | 'lease' | 'mixed';
  /** Set when the acquire settles. */
  outcome?: AcquireOutcome;
  waitedMs?: number;
  /** Set by the tracing channel: the handle, or the error. */
  result?: unknown;
  error?: unknown;
}

export interface ReleaseMessage {
  readonly kind: EventLockKind;
  readonly name: string;
  readonly mode: 'read' | 'write' | 'lease';
  readonly heldMs: number;
}

/**
 * Why a held lock or lease was lost: its session could not be trusted, the client closed
 * under its holder, or it was held past its `maxHoldMs` (and released for the next holder).
 */
export type LostReason = 'session' | 'closing' | 'max-hold';

export interface LostMessage extends ReleaseMessage {
  readonly reason: LostReason;
  /** The loss in words (the `LockLostError`'s `why`). */
  readonly why: string;
}

export interface SessionMessage {
  readonly state: 'connected' | 'disconnected' | 'at-risk' | 'recovered' | 'lost' | 'closed';
  readonly sessionId?: string;
  readonly server?: string;
}

const acquireChannel = tracingChannel<unknown, AcquireMessage>(LOCK_CHANNELS.acquire);
const releaseChannel = channel(LOCK_CHANNELS.release);
const lostChannel = channel(LOCK_CHANNELS.lost);
const sessionChannel = channel(LOCK_CHANNELS.session);

/** Runs `acquire` inside the acquire tracing channel when someone listens; as is otherwise. */
export function tracedAcquire<T>(message: () => AcquireMessage, acquire: () => Promise<T>): Promise<T> {
  if (!acquireChannel.hasSubscribers) return acquire();
  const context = message();
  const startedAt = performance.now();
  const traced = async (): Promise<T> => {
    try {
      const result = await acquire();
      context.outcome = result === null ? 'taken' : 'granted';
      return result;
    } catch (error) {
      context.outcome =
        error instanceof LockTimeoutError
          ? error.timeoutMs === 0
            ? 'taken'
            : 'timeout'
          : error instanceof LockAbortedError
            ? 'aborted'
            : 'error';
      throw error;
    } finally {
      context.waitedMs = elapsedMs(startedAt);
    }
  };
  return acquireChannel.tracePromise(traced, context);
}

/** Milliseconds since `from` (a `performance.now()` time), to the microsecond. */
export function elapsedMs(from: number): number {
  return Math.round((performance.now() - from) * 1000) / 1000;
}

/** Also counts the release (see `heldNow`): call it once per granted handle. */
export function publishRelease(message: () => ReleaseMessage): void {
  countRelease();
  if (releaseChannel.hasSubscribers) releaseChannel.publish(message());
}

export function publishLost(message: () => LostMessage): void {
  if (lostChannel.hasSubscribers) lostChannel.publish(message());
}

/** Also notes `client`'s state (see `sessionsUp`), whoever listens. */
export function publishSession(client: object, message: () => SessionMessage): void {
  noteSessionState(client, message().state);
  if (sessionChannel.hasSubscribers) sessionChannel.publish(message());
}

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
