import { nextJobRecord, readJobState, type JobState } from './job-record';

const NONE: JobState = { holdUntil: null, runs: [] };
const RUN = { id: 'run-1', by: 'host:1', tookMs: 12.5, outcome: 'ok' } as const;

describe('job record: the stored hold', () => {
  // performance.now() has sub-millisecond steps on a real clock (fake timers give whole ones):
  // the hold left is rarely a whole number of milliseconds.
  it.each([999.0001, 999.5, 999.9999, 0.25])(
    'a hold of %p ms left is stored so that it ends no earlier than that after the write',
    (holdMs) => {
      const writtenAt = 1e12;
      const { holdUntil } = readJobState({ data: nextJobRecord(NONE, RUN, holdMs, false), version: 0, writtenAt });
      expect(holdUntil! - writtenAt).toBeGreaterThanOrEqual(holdMs);
      expect(holdUntil! - writtenAt).toBeLessThan(holdMs + 1);
    },
  );
});
