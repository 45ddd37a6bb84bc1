// The core demo (until the Nest sample app lands): four lock clients, each with its own
// ZooKeeper session as four service instances would have, update one "remote" stock
// counter with a slow read-modify-write. Under the lock no update is lost; the unlocked
// control loses most of them. Starts a throwaway ZooKeeper unless ZK_CONNECT is set.
import { setTimeout as sleep } from 'node:timers/promises';

import { ZkLockBackend } from '../lib/index.js';
import { ZkServer } from '../test/support/zookeeper/zk-server.js';

const CLIENTS = 4;
const UPDATES_PER_CLIENT = Number(process.env.DEMO_UPDATES ?? 25);

/** A resource that is slow to read and write, like a row in a remote store. */
class RemoteStock {
  private value = 0;
  async read(): Promise<number> {
    await sleep(2);
    return this.value;
  }
  async write(value: number): Promise<void> {
    await sleep(2);
    this.value = value;
  }
}

async function run(locks: ZkLockBackend[], locked: boolean): Promise<{ final: number; waits: number[]; holds: number[] }> {
  const stock = new RemoteStock();
  const waits: number[] = [];
  const holds: number[] = [];
  await Promise.all(
    locks.map(async (client) => {
      for (let i = 0; i < UPDATES_PER_CLIENT; i++) {
        const asked = performance.now();
        const lock = locked ? await client.acquire('stock:sku-42', { timeoutMs: 30_000 }) : undefined;
        const got = performance.now();
        await stock.write((await stock.read()) + 1);
        await lock?.release();
        waits.push(got - asked);
        holds.push(performance.now() - got);
      }
    }),
  );
  return { final: await stock.read(), waits, holds };
}

const pct = (values: number[], p: number): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1);
};

async function main(): Promise<void> {
  const server = process.env.ZK_CONNECT ? undefined : new ZkServer({ tickTime: 200 });
  await server?.start();
  const connectionString = process.env.ZK_CONNECT ?? server!.connectionString;
  console.log(`ZooKeeper at ${connectionString}; ${CLIENTS} clients x ${UPDATES_PER_CLIENT} updates each\n`);
  const locks = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) => ZkLockBackend.connect({ connectionString, rootPath: '/demo-locks', identity: `instance-${i + 1}` })),
  );
  try {
    const expected = CLIENTS * UPDATES_PER_CLIENT;
    const withLock = await run(locks, true);
    const without = await run(locks, false);
    console.table([
      { run: 'with lock', expected, final: withLock.final, lost: expected - withLock.final, 'wait p50 ms': pct(withLock.waits, 50), 'wait p99 ms': pct(withLock.waits, 99), 'hold p50 ms': pct(withLock.holds, 50) },
      { run: 'no lock (control)', expected, final: without.final, lost: expected - without.final, 'wait p50 ms': '-', 'wait p99 ms': '-', 'hold p50 ms': pct(without.holds, 50) },
    ]);
    const ok = withLock.final === expected;
    console.log(ok ? '\nThe locked run lost no update.' : '\nFAILED: the locked run lost updates.');
    process.exitCode = ok ? 0 : 1;
  } finally {
    await Promise.all(locks.map((l) => l.close()));
    await server?.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
