import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockFixture } from '../support/lock-fixture';
import { runWorker } from '../support/run-worker';
import { zkConnect } from '../support/zk-test-env';

describe('mutual exclusion (write mode)', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('mutex')));
  afterAll(() => fx.cleanup());

  it('never lets two holders in among many contenders in one process', async () => {
    const clients = await fx.many(4);
    let inside = 0;
    let maxInside = 0;
    let counter = 0;
    const tokens: bigint[] = [];
    const loop = async (client: (typeof clients)[number]): Promise<void> => {
      for (let i = 0; i < 6; i++) {
        const lock = await client.acquire('shared', { timeoutMs: 30_000 });
        inside++;
        maxInside = Math.max(maxInside, inside);
        tokens.push(lock.fencingToken);
        const read = counter;
        await sleep(1);
        counter = read + 1;
        inside--;
        await lock.release();
      }
    };
    // 4 sessions x 3 concurrent callers each: 12 contenders, 72 critical sections.
    await Promise.all(clients.flatMap((client) => [loop(client), loop(client), loop(client)]));

    expect(maxInside).toBe(1);
    expect(counter).toBe(72);
    // Tokens in grant order strictly increase.
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    // Nothing left behind: every node deleted, the empty lock directory removed.
    expect(await fx.tree()).toEqual([]);
  });

  it('never lets two holders in across three processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-lock-mutex-'));
    const files = { marker: join(dir, 'marker'), counter: join(dir, 'counter'), log: join(dir, 'tokens') };
    writeFileSync(files.counter, '0');
    writeFileSync(files.log, '');
    try {
      const args = {
        connectionString: zkConnect(),
        rootPath: fx.rootPath,
        name: 'cross-process',
        iterations: 15,
        ...files,
      };
      const results = await Promise.all(
        [1, 2, 3].map(() => runWorker<{ overlaps: number }>('contender.worker.ts', args)),
      );

      expect(results.map((r) => r.overlaps)).toEqual([0, 0, 0]);
      expect(Number(readFileSync(files.counter, 'utf8'))).toBe(45);
      const tokens = readFileSync(files.log, 'utf8').trim().split('\n').map(BigInt);
      expect(tokens).toHaveLength(45);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
      expect(await fx.tree()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
