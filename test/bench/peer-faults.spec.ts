import { faultMarkdown, runFaultPass, type FaultResults } from '../../bench/peers/faults/fault-pass';
import { casesFor, FAULT_IDS, notApplicable } from '../../bench/peers/faults/fault-scenarios';
import { PEER_IDS } from '../../bench/peers/peer-lock';
import { isAlive } from '../support/is-alive';
import { PgFixture, pgUrl } from '../support/postgres/pg-test-env';

/**
 * The quick fault pass CI runs: one trial of every fault at every lock, on real servers
 * (ZooKeeper, Redis, PostgreSQL). It checks behaviour only: what the Redis locks do is
 * what the page reports, not asserted here (one trial may or may not show an overlap).
 */
describe('the peers fault trials, one trial each (runFaultPass)', () => {
  let fixture: PgFixture;
  let results: FaultResults;
  const lines: string[] = [];

  beforeAll(async () => {
    fixture = await PgFixture.create('peer_faults');
    results = await runFaultPass({
      reps: 1,
      pgUrl: pgUrl(),
      pgSchema: fixture.schema,
      log: (line) => lines.push(line),
    });
  }, 10 * 60_000);

  afterAll(async () => {
    await fixture?.cleanup();
  });

  it('has a row per fault case and lock, with its one trial, or why the lock sits it out', () => {
    const expected = FAULT_IDS.flatMap((fault) =>
      PEER_IDS.flatMap((peer) => casesFor(fault, peer).map((faultCase) => `${fault}/${faultCase.variant}/${peer}`)),
    );
    expect(results.rows.map((row) => `${row.fault}/${row.variant}/${row.peer}`).sort()).toEqual(expected.sort());
    for (const row of results.rows) {
      expect(row.error).toBeUndefined();
      const sitsOut = notApplicable(row, row.peer);
      expect(row.notApplicable).toBe(sitsOut);
      expect(row.trials).toHaveLength(sitsOut ? 0 : 1);
      expect(row.summary.trials).toBe(row.trials.length);
    }
    expect(results.rows.find((row) => row.fault === 'failover' && row.peer === 'redlock-3')?.notApplicable).toMatch(
      /^n\/a/,
    );
  });

  it("every trial's events include A's grant", () => {
    for (const row of results.rows)
      for (const trial of row.trials)
        expect({ row: `${row.fault}/${row.variant}/${row.peer}`, ...trial.check }).toMatchObject({ aGranted: true });
  });

  it('ours never overlapped, and none of its stale fenced writes landed, in any fault; it gives tokens', () => {
    const ours = results.rows.filter((row) => row.peer === 'ours');
    expect(ours.map((row) => row.fault).sort()).toEqual([...FAULT_IDS].sort());
    expect(ours.filter((row) => !row.fenced).map((row) => row.fault)).toEqual([]);
    const trials = ours.flatMap((row) => row.trials.map((trial) => ({ fault: row.fault, ...trial.check, trial })));
    // A pause that found no gap between two writes (a machine too busy for one) may stop A
    // between its check and its write, or inside its fenced transaction, whose commit then
    // comes after B's grant though the fence orders it before B's writes: the checker's
    // times cannot tell. The pass counts such trials; they are left out here.
    const between = trials.filter(({ trial }) => trial.aPaused?.betweenWrites !== false);
    expect(between.filter((trial) => trial.overlapped)).toEqual([]);
    expect(between.filter((trial) => trial.staleWrites.fenced.landed > 0)).toEqual([]);
  });

  it('leaves no server or worker process behind', () => {
    // ZooKeeper, Redis (and their restarts) and two workers per trial at the least.
    expect(results.processes.length).toBeGreaterThan(2 * results.rows.filter((row) => row.trials.length > 0).length);
    expect(results.processes.filter(isAlive)).toEqual([]);
  });

  it('prints its tables for the page', () => {
    const markdown = faultMarkdown(results);
    for (const fault of FAULT_IDS) expect(markdown).toContain(`(${'abcde'[FAULT_IDS.indexOf(fault)]})`);
    process.stdout.write(`\n${lines.join('\n')}\n\n${markdown}\n\nwall time: ${results.meta.wallMs} ms\n`);
  });
});
