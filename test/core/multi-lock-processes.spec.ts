import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LockFixture } from '../support/lock-fixture';
import { runWorker } from '../support/run-worker';
import { zkConnect } from '../support/zk-test-env';

const ITERATIONS = 200;

describe('acquireAll across processes', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('multi-processes')));
  afterAll(() => fx.cleanup());

  it(`two processes taking {a, b} and {b, a} ${ITERATIONS} times each: no deadlock, no overlap, nothing left`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-multi-lock-'));
    const files = {
      marker: join(dir, 'marker'),
      counter: join(dir, 'counter'),
      tokens: { a: join(dir, 'tokens-a'), b: join(dir, 'tokens-b') },
      log: join(dir, 'holders'),
      ready: join(dir, 'ready'),
    };
    mkdirSync(files.ready);
    writeFileSync(files.log, '');
    writeFileSync(files.counter, '0');
    for (const file of Object.values(files.tokens)) writeFileSync(file, '');
    try {
      const common = {
        connectionString: zkConnect(),
        rootPath: fx.rootPath,
        iterations: ITERATIONS,
        timeoutMs: 20_000,
        parties: 2,
        ...files,
      };
      const results = await Promise.all(
        [
          ['a', 'b'],
          ['b', 'a'],
        ].map((names) =>
          runWorker<{ overlaps: number }>('multi-contender.worker.ts', { ...common, names, id: names.join('') }),
        ),
      );

      expect(results.map((r) => r.overlaps)).toEqual([0, 0]);
      expect(Number(readFileSync(files.counter, 'utf8'))).toBe(2 * ITERATIONS);
      // They did contend: the holder changed hands between the two processes again and again.
      const holders = readFileSync(files.log, 'utf8').trim().split('\n');
      expect(holders).toHaveLength(2 * ITERATIONS);
      const handovers = holders.filter((id, i) => i > 0 && id !== holders[i - 1]).length;
      expect(handovers).toBeGreaterThan(ITERATIONS / 4);
      for (const file of Object.values(files.tokens)) {
        const tokens = readFileSync(file, 'utf8').trim().split('\n').map(BigInt);
        expect(tokens).toHaveLength(2 * ITERATIONS);
        for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
      }
      expect(await fx.tree()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
