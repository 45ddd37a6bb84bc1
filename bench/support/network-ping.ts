import type { BenchMeta } from '../results.js';
import { RawZk } from '../raw-client.js';
import type { DelayProxy } from './delay-proxy.js';
import { median } from './sample-stats.js';

/** Pings per path: enough for a steady median, a fraction of a second even at 1 ms each way. */
const PINGS = 100;

/**
 * What the latency pass's network really was: the same read (the children of `root`) sent
 * `PINGS` times directly and through the proxy, taking turns, half the difference of their
 * medians the one-way delay a client saw; and the proxy's own account of each chunk it held.
 */
export async function measureNetwork(
  direct: RawZk,
  proxy: DelayProxy,
  root: string,
): Promise<NonNullable<BenchMeta['network']>> {
  const proxied = await RawZk.connect(proxy.connectionString);
  try {
    const times = { direct: [] as number[], proxied: [] as number[] };
    for (let i = 0; i < PINGS; i++) {
      for (const [path, zk] of [
        ['direct', direct],
        ['proxied', proxied],
      ] as const) {
        const start = process.hrtime.bigint();
        await zk.children(root);
        times[path].push(Number(process.hrtime.bigint() - start) / 1e3);
      }
    }
    const [directUs, proxiedUs] = [median(times.direct), median(times.proxied)];
    return {
      oneWayMs: proxy.oneWayMs,
      pingDirectUs: directUs,
      pingProxiedUs: proxiedUs,
      addedOneWayUs: (proxiedUs - directUs) / 2,
      proxy: await proxy.stats(),
    };
  } finally {
    await proxied.close();
  }
}
