import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LockFixture } from '../support/lock-fixture';
import { runWorker } from '../support/run-worker';
import { zkConnect } from '../support/zk-test-env';

const ITERATIONS = 200;

/** What `multi-contender.worker.ts` reports. */
interface Outcome {
  overlaps: number;
  joined: Record<string, number>;
  refused: Record<string, number>;
  refusedWithRivalQueued: number;
}

/** The files the workers share: the marker, the counter, the token files, the holders' log. */
function sharedFiles(dir: string) {
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
  return files;
}

/** The holders' log, one id per critical section, and how often the holder changed hands. */
function holdersOf(log: string): { holders: string[]; handovers: number } {
  const holders = readFileSync(log, 'utf8').trim().split('\n');
  return { holders, handovers: holders.filter((id, i) => i > 0 && id !== holders[i - 1]).length };
}

/** Each lock's fencing tokens, in grant order, rose every time; `count` of them. */
function expectRisingTokens(tokenFiles: Record<string, string>, count: number): void {
  for (const file of Object.values(tokenFiles)) {
    const tokens = readFileSync(file, 'utf8').trim().split('\n').map(BigInt);
    expect(tokens).toHaveLength(count);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  }
}

const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

describe('acquireAll across processes', () => {
  let fx: LockFixture;
  let dir: string;
  beforeAll(async () => (fx = await LockFixture.create('multi-processes')));
  afterAll(() => fx.cleanup());
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'zk-multi-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** What every worker is given: the server, the suite's root, the shared files. */
  const common = (files: ReturnType<typeof sharedFiles>) => ({
    connectionString: zkConnect(),
    rootPath: fx.rootPath,
    iterations: ITERATIONS,
    timeoutMs: 20_000,
    parties: 2,
    ...files,
  });

  it(`two processes taking {a, b} and {b, a} ${ITERATIONS} times each: no deadlock, no overlap, nothing left`, async () => {
    const files = sharedFiles(dir);
    const results = await Promise.all(
      [
        ['a', 'b'],
        ['b', 'a'],
      ].map((names) =>
        runWorker<Outcome>('multi-contender.worker.ts', { ...common(files), names, id: names.join('') }),
      ),
    );

    expect(results.map((r) => r.overlaps)).toEqual([0, 0]);
    expect(Number(readFileSync(files.counter, 'utf8'))).toBe(2 * ITERATIONS);
    // They did contend: the holder changed hands between the two processes again and again.
    const { holders, handovers } = holdersOf(files.log);
    expect(holders).toHaveLength(2 * ITERATIONS);
    expect(handovers).toBeGreaterThan(ITERATIONS / 4);
    expectRisingTokens(files.tokens, 2 * ITERATIONS);
    expect(await fx.tree()).toEqual([]);
  });

  it(`one process holding a or b first, the other taking {b, a}, ${ITERATIONS} times each: joined or refused at once, never a deadlock`, async () => {
    // Inside withLock('b'), withLocks(['a', 'b']) would wait for a while holding b, as the
    // other process waits for b while holding a. A wait that never ends shows up as a
    // LockTimeoutError that fails the worker.
    const files = sharedFiles(dir);
    const [chain, rival] = await Promise.all([
      runWorker<Outcome>('multi-contender.worker.ts', {
        ...common(files),
        names: ['a', 'b'],
        id: 'chain',
        holdFirst: true,
      }),
      runWorker<Outcome>('multi-contender.worker.ts', { ...common(files), names: ['b', 'a'], id: 'rival' }),
    ]);

    // Holding a, the multi-lock joins it and takes b, which sorts after it; holding b, it is refused.
    expect(Object.keys(chain.joined)).toEqual(['a']);
    expect(Object.keys(chain.refused)).toEqual(['b']);
    expect(sum(chain.joined) + sum(chain.refused)).toBe(ITERATIONS);
    // Some refusals came while the rival held a and waited for b: there the old code deadlocked.
    expect(chain.refusedWithRivalQueued).toBeGreaterThan(0);
    expect([chain.overlaps, rival.overlaps]).toEqual([0, 0]);
    const sections = ITERATIONS + sum(chain.joined);
    expect(Number(readFileSync(files.counter, 'utf8'))).toBe(sections);
    const { holders, handovers } = holdersOf(files.log);
    expect(holders).toHaveLength(sections);
    expect(handovers).toBeGreaterThan(sum(chain.joined) / 4); // they did contend
    expectRisingTokens(files.tokens, sections);
    expect(await fx.tree()).toEqual([]);
  });
});
