import { faultMarkdown, type FaultResults, type FaultRow } from '../../bench/peers/faults/fault-pass';
import { summarise, type TrialCheck } from '../../bench/peers/faults/overlap-checker';
import { trialCheck } from '../support/trial-check';

const row = (
  peer: FaultRow['peer'],
  fenced: boolean,
  checks: TrialCheck[],
  extra: Partial<FaultRow> = {},
): FaultRow => ({
  fault: 'pause',
  peer,
  fenced,
  summary: summarise(checks),
  failedTrials: 0,
  pausedInsideWrite: 0,
  trials: checks.map((c, i) => ({ rep: i + 1, key: `k${i}`, check: c, a: {}, b: {} })),
  ...extra,
});

const results = (rows: FaultRow[]): FaultResults => ({
  schema: 1,
  kind: 'peer-faults',
  reps: 2,
  ttlMs: 2000,
  settings: { writeEveryMs: 50, strikeAfterMs: 200, faultMs: 3000, aWorkMs: 5000, bWorkMs: 5000 },
  meta: { startedAt: '2025-01-01T00:00:00.000Z', wallMs: 1, machine: { cpus: 2, loadavgStart: [], loadavgEnd: [] } },
  processes: [],
  rows,
});

describe('the fault trials tables (faultMarkdown)', () => {
  it('a row per lock: overlaps, told first k of n, stale writes by row, — where no token, failed calls of B', () => {
    const markdown = faultMarkdown(
      results([
        row('ours', true, [
          trialCheck({ toldFirst: false, staleWrites: { fenced: { landed: 0, refused: 3 }, unfenced: { landed: 0 } } }),
          trialCheck({}),
        ]),
        row('murlock', false, [
          trialCheck({
            overlapped: true,
            overlapMs: 2950.4,
            toldFirst: false,
            staleWrites: { fenced: { landed: 0, refused: 0 }, unfenced: { landed: 59 } },
          }),
          trialCheck({ bGranted: false, bFailed: true }),
        ]),
        row('redlock-3', false, [], { fault: 'failover', notApplicable: 'n/a: no replica' }),
      ]),
    );
    expect(markdown).toContain('#### (a) holder paused');
    expect(markdown).toContain('| ours | 2 | 0 | — | 0 of 1 | 0 (3 refused) | 0 |');
    expect(markdown).toContain(
      "| murlock | 2 (B's call failed in 1) | 1 | 2950 / 2950 ms | 0 of 1 | — | 59 in 1 trials |",
    );
    expect(markdown).toContain('#### (d) primary lost');
    expect(markdown).toContain('| redlock-3 | n/a: no replica |');
  });
});
