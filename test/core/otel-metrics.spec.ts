import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

import { registerZkLockMetrics, ZK_LOCK_METRICS } from '../../lib/otel';
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
  beforeAll(async () => {
    fx = await LockFixture.create('otel');
    reader = new TestReader();
    provider = new MeterProvider({ readers: [reader] });
    stop = registerZkLockMetrics(provider.getMeter('test'));
  });
  afterAll(async () => {
    stop();
    await provider.shutdown();
    await fx.cleanup();
  });

  const points = async (name: string): Promise<Point[]> => {
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
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
    await waitUntil(async () => (await points(ZK_LOCK_METRICS.session))[0]?.value === 1, 'the new session is up');
    await lost.release();
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
