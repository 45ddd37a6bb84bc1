import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

import { InvalidOptionError } from '../../lib/index';
import { registerZkLockMetrics, ZK_LOCK_METRICS, ZK_LOCK_NAME_ATTRIBUTE } from '../../lib/otel';
import { LockFixture } from '../support/lock-fixture';
import { filesLoadedByMainEntry } from '../support/main-entry-loads';
import { waitUntil } from '../support/wait-until';

/** Collects on demand, as a test needs. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

type Point = { attributes: Record<string, unknown>; value: unknown };

/** `nestjs-zk-lock/otel` with the real OpenTelemetry SDK's metric reader. */
describe('OpenTelemetry metrics', () => {
  let fx: LockFixture;
  let reader: TestReader;
  let provider: MeterProvider;
  let stop: () => void;
  // The same events, recorded with the lock-name attribute: a name's first segment.
  let namedReader: TestReader;
  let namedProvider: MeterProvider;
  let stopNamed: () => void;
  beforeAll(async () => {
    fx = await LockFixture.create('otel');
    reader = new TestReader();
    provider = new MeterProvider({ readers: [reader] });
    stop = registerZkLockMetrics(provider.getMeter('test'));
    namedReader = new TestReader();
    namedProvider = new MeterProvider({ readers: [namedReader] });
    stopNamed = registerZkLockMetrics({
      meter: namedProvider.getMeter('named'),
      lockNameAttribute: (name) => (name === 'm' ? undefined : name.split('/')[0]),
    });
  });
  afterAll(async () => {
    stop();
    stopNamed();
    await provider.shutdown();
    await namedProvider.shutdown();
    await fx.cleanup();
  });

  const points = async (name: string, from: MetricReader = reader): Promise<Point[]> => {
    const { resourceMetrics } = (await from.collect()) as { resourceMetrics: ResourceMetrics };
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
  };
  const count = (point: Point | undefined): number => (point?.value as { count: number } | undefined)?.count ?? 0;

  it('records waits by outcome, holds, locks held now, losses and the session', async () => {
    const [a, b] = await fx.many(2);
    const holder = await fx.expirable();
    const lock = await a.acquire('m');
    expect(await b.tryAcquire('m')).toBeNull();
    await expect(b.acquire('m', { timeoutMs: 20 })).rejects.toMatchObject({ code: 'LOCK_TIMEOUT' });
    expect((await points(ZK_LOCK_METRICS.held))[0].value).toBe(1);
    await lock.release();
    const group = await a.acquireAll(['g1, with a comma', 'g2']); // counted by handles, not by the joined name
    expect((await points(ZK_LOCK_METRICS.held))[0].value).toBe(2);
    await group.release();

    const waits = await points(ZK_LOCK_METRICS.wait);
    const outcome = (kind: string, value: string) =>
      waits.find((p) => p.attributes['zk_lock.kind'] === kind && p.attributes['zk_lock.outcome'] === value);
    expect(count(outcome('lock', 'granted'))).toBeGreaterThanOrEqual(1);
    expect(count(outcome('lock', 'taken'))).toBe(1);
    expect(count(outcome('lock', 'timeout'))).toBe(1);
    expect(count(outcome('group', 'granted'))).toBe(1);
    const holds = await points(ZK_LOCK_METRICS.hold);
    expect(holds.reduce((n, p) => n + count(p), 0)).toBe(3);
    expect((await points(ZK_LOCK_METRICS.held))[0].value).toBe(0);

    const lost = await holder.acquire('to-lose');
    await fx.expire(holder);
    await waitUntil(() => lost.signal.aborted, 'the holder is told');
    expect((await points(ZK_LOCK_METRICS.lost))[0]).toMatchObject({
      attributes: { 'zk_lock.kind': 'lock', 'zk_lock.mode': 'write' },
      value: 1,
    });
    // Without lockNameAttribute, no point names its lock.
    for (const metric of [ZK_LOCK_METRICS.wait, ZK_LOCK_METRICS.hold, ZK_LOCK_METRICS.lost])
      for (const point of await points(metric)) expect(point.attributes).not.toHaveProperty(ZK_LOCK_NAME_ATTRIBUTE);
    expect((await points(ZK_LOCK_METRICS.lost, namedReader))[0]).toEqual({
      attributes: { 'zk_lock.kind': 'lock', 'zk_lock.mode': 'write', [ZK_LOCK_NAME_ATTRIBUTE]: 'to-lose' },
      value: 1,
    });
    await waitUntil(async () => (await points(ZK_LOCK_METRICS.session))[0]?.value === 1, 'the new session is up');
    await lost.release();
  });

  it('lockNameAttribute: the name on waits and holds, as the function maps it (undefined or a throw: left off)', async () => {
    const [c] = await fx.many(1);
    for (const name of ['orders/1', 'orders/2', 'orders/3']) await (await c.acquire(name)).release();
    const named = (metric: string) => points(metric, namedReader);
    const orders = (list: Point[], outcome?: string) =>
      list.filter(
        (p) =>
          p.attributes[ZK_LOCK_NAME_ATTRIBUTE] === 'orders' &&
          (outcome === undefined || p.attributes['zk_lock.outcome'] === outcome),
      );
    // Three locks, one series each: the function keeps the attribute's values few.
    expect(orders(await named(ZK_LOCK_METRICS.wait), 'granted').map(count)).toEqual([3]);
    expect(orders(await named(ZK_LOCK_METRICS.hold)).map(count)).toEqual([3]);
    // 'm' (the first test's lock) mapped to undefined: its points carry no name.
    const values = (await named(ZK_LOCK_METRICS.wait)).map((p) => p.attributes[ZK_LOCK_NAME_ATTRIBUTE]);
    expect(values).toContain(undefined);
    expect(values).not.toContain('m');

    // true: the name as it is; a function that throws leaves the attribute off, nothing else.
    const asIs = new TestReader();
    const throws = new TestReader();
    const providers = [new MeterProvider({ readers: [asIs] }), new MeterProvider({ readers: [throws] })];
    const stops = [
      registerZkLockMetrics({ meter: providers[0].getMeter('as-is'), lockNameAttribute: true }),
      registerZkLockMetrics({
        meter: providers[1].getMeter('throws'),
        lockNameAttribute: () => {
          throw new Error('a bug in the mapping');
        },
      }),
    ];
    try {
      await (await c.acquire('orders/4')).release();
      await (await c.acquireAll(['orders/5', 'orders/6'])).release();
      const nameIn = (list: Point[]) => list.map((p) => p.attributes[ZK_LOCK_NAME_ATTRIBUTE]).sort();
      expect(nameIn(await points(ZK_LOCK_METRICS.hold, asIs))).toEqual(['orders/4', 'orders/5', 'orders/6']);
      // A multi-lock's acquire is one wait: its names joined.
      const groupWaits = (await points(ZK_LOCK_METRICS.wait, asIs)).filter(
        (p) => p.attributes['zk_lock.kind'] === 'group',
      );
      expect(nameIn(groupWaits)).toEqual(['orders/5, orders/6']);
      const [held] = await points(ZK_LOCK_METRICS.hold, throws);
      expect([held.attributes, count(held)]).toEqual([{ 'zk_lock.kind': 'lock', 'zk_lock.mode': 'write' }, 3]);
    } finally {
      for (const stopOne of stops) stopOne();
      await Promise.all(providers.map((p) => p.shutdown()));
    }
  });

  it('lockNameAttribute of another type: InvalidOptionError at registration', () => {
    expect(() => registerZkLockMetrics({ lockNameAttribute: 'yes' as unknown as boolean })).toThrow(InvalidOptionError);
  });

  it('registered after the session connected and a lock was taken: reads the truth, not a count from zero', async () => {
    const [c] = await fx.many(1);
    const early = await c.acquire('late-metrics');
    const lateReader = new TestReader();
    const lateProvider = new MeterProvider({ readers: [lateReader] });
    const stopLate = registerZkLockMetrics(lateProvider.getMeter('late'));
    const value = async (name: string): Promise<unknown> => {
      const { resourceMetrics } = (await lateReader.collect()) as { resourceMetrics: ResourceMetrics };
      const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
      return metric?.dataPoints[0]?.value;
    };
    try {
      expect(await value(ZK_LOCK_METRICS.session)).toBe(1);
      expect(await value(ZK_LOCK_METRICS.held)).toBe(1);
      await early.release();
      expect(await value(ZK_LOCK_METRICS.held)).toBe(0); // not -1
      expect((await fx.nodes('late-metrics')) ?? []).toEqual([]); // its node is gone (and maybe its directory)
    } finally {
      stopLate();
      await lateProvider.shutdown();
    }
  });

  it('the main entry point loads nothing of @opentelemetry/api (an optional peer)', () => {
    expect(filesLoadedByMainEntry(/@opentelemetry/)).toEqual([]);
  });
});
