import diagnostics from 'node:diagnostics_channel';
import { metrics, type Attributes, type Meter, type ObservableResult } from '@opentelemetry/api';

import {
  LOCK_CHANNELS,
  type AcquireMessage,
  type LostMessage,
  type ReleaseMessage,
  heldNow,
  sessionsUp,
} from '../core/diagnostics/diagnostics.js';
import { InvalidOptionError } from '../core/errors/errors.js';

/**
 * The instruments, by name; attributes `zk_lock.kind`, `zk_lock.mode`, `zk_lock.outcome` on
 * acquires, and `zk_lock.name` when asked for (`lockNameAttribute`).
 */
export const ZK_LOCK_METRICS = {
  /** Histogram, ms: how long each acquire waited, by outcome (granted, taken, timeout, aborted, error). */
  wait: 'zk_lock.acquire.duration',
  /** Histogram, ms: how long each lock or lease was held until its release. */
  hold: 'zk_lock.hold.duration',
  /** Counter: locks and leases lost while held. */
  lost: 'zk_lock.lost',
  /** Observable UpDownCounter, no attributes: locks and leases this process holds now (granted, not yet released; a lost one until its release). */
  held: 'zk_lock.held',
  /** Observable gauge: 1 while every open client's session is connected and trusted, else 0 (also before any connects). */
  session: 'zk_lock.session.up',
} as const;

/** The attribute naming the lock on `wait`, `hold` and `lost`, when `lockNameAttribute` asks for it. */
export const ZK_LOCK_NAME_ATTRIBUTE = 'zk_lock.name';

export interface ZkLockMetricsOptions {
  /** Where to record (default: the global meter provider's `nestjs-zk-lock`). */
  readonly meter?: Meter;
  /**
   * Adds `zk_lock.name` to the per-lock instruments (`wait`, `hold`, `lost`): `true` for the
   * lock's name as it is, or a function from the name to the value (a group's acquire
   * passes its names joined with `, `); a function's `undefined`, or a throw, leaves the
   * attribute off. Off by default: every distinct value is a time series of its own, so
   * names with ids in them (`orders/42`) need a function that maps them to few values.
   */
  readonly lockNameAttribute?: boolean | ((name: string) => string | undefined);
}

/**
 * Records OpenTelemetry metrics from the channels the ZooKeeper backend publishes (see
 * `LOCK_CHANNELS`), on a meter (default: the global meter provider's `nestjs-zk-lock`):
 * `registerZkLockMetrics(meter)` or `registerZkLockMetrics({ meter?, lockNameAttribute? })`.
 * Returns the function that stops recording. `@opentelemetry/api` is an optional peer:
 * only this entry point (`nestjs-zk-lock/otel`) loads it.
 */
export function registerZkLockMetrics(meterOrOptions?: Meter | ZkLockMetricsOptions): () => void {
  const options: ZkLockMetricsOptions = isMeter(meterOrOptions) ? { meter: meterOrOptions } : (meterOrOptions ?? {});
  const { meter = metrics.getMeter('nestjs-zk-lock') } = options;
  const nameOf = lockNameOf(options.lockNameAttribute);
  const wait = meter.createHistogram(ZK_LOCK_METRICS.wait, {
    unit: 'ms',
    description: 'Time an acquire waited, by outcome',
  });
  const hold = meter.createHistogram(ZK_LOCK_METRICS.hold, {
    unit: 'ms',
    description: 'Time a lock or lease was held',
  });
  const lost = meter.createCounter(ZK_LOCK_METRICS.lost, { description: 'Locks and leases lost while held' });
  // Read when collected, not counted from the channels: right even when registered after
  // the application connected and took locks.
  const held = meter.createObservableUpDownCounter(ZK_LOCK_METRICS.held, { description: 'Locks and leases held now' });
  const observeHeld = (result: ObservableResult): void => result.observe(heldNow());
  held.addCallback(observeHeld);
  const gauge = meter.createObservableGauge(ZK_LOCK_METRICS.session, {
    description: '1 while the ZooKeeper session is connected and trusted',
  });
  const observeUp = (result: ObservableResult): void => result.observe(sessionsUp() ? 1 : 0);
  gauge.addCallback(observeUp);

  const attributes = ({ kind, mode, name }: { kind: string; mode: string; name: string }): Attributes => {
    const base: Attributes = { 'zk_lock.kind': kind, 'zk_lock.mode': mode };
    const value = nameOf(name);
    return value === undefined ? base : { ...base, [ZK_LOCK_NAME_ATTRIBUTE]: value };
  };
  const tracing = diagnostics.tracingChannel<unknown, AcquireMessage>(LOCK_CHANNELS.acquire);
  const onSettled = (message: AcquireMessage): void => {
    wait.record(message.waitedMs ?? 0, { ...attributes(message), 'zk_lock.outcome': message.outcome ?? 'error' });
  };
  const none = (): void => undefined;
  const handlers = { start: none, end: none, asyncStart: none, asyncEnd: onSettled, error: none };
  const onRelease = (message: unknown): void => {
    const release = message as ReleaseMessage;
    hold.record(release.heldMs, attributes(release));
  };
  const onLost = (message: unknown): void => lost.add(1, attributes(message as LostMessage));

  tracing.subscribe(handlers);
  diagnostics.subscribe(LOCK_CHANNELS.release, onRelease);
  diagnostics.subscribe(LOCK_CHANNELS.lost, onLost);
  return () => {
    tracing.unsubscribe(handlers);
    diagnostics.unsubscribe(LOCK_CHANNELS.release, onRelease);
    diagnostics.unsubscribe(LOCK_CHANNELS.lost, onLost);
    held.removeCallback(observeHeld);
    gauge.removeCallback(observeUp);
  };
}

function isMeter(value: unknown): value is Meter {
  return typeof (value as Meter | undefined)?.createHistogram === 'function';
}

/** The `zk_lock.name` value of a lock's name, from the option; checked once, at registration. */
function lockNameOf(option: ZkLockMetricsOptions['lockNameAttribute']): (name: string) => string | undefined {
  if (option === undefined || option === false) return () => undefined;
  if (option === true) return (name) => name;
  if (typeof option !== 'function')
    throw new InvalidOptionError(
      'lockNameAttribute',
      option,
      'true, false, or a function from a lock name to a string',
    );
  return (name) => {
    // Called inside diagnostics_channel, where a throw would become an uncaught exception.
    try {
      const value = option(name);
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  };
}
