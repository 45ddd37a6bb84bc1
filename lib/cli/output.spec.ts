import { historyText, queueText } from './output.js';

const at = Date.parse('2026-01-01T00:00:00Z');
const run = (by: string, identity?: string) => ({
  by,
  ...(identity !== undefined && { identity }),
  startedAt: at,
  endedAt: at + 35,
  outcome: 'ok' as const,
});

describe('who ran a job, as history and list show it: the configured identity, host:pid beside it', () => {
  it('history: the identity with host:pid in brackets; host:pid alone for a run recorded without one', () => {
    const text = historyText(
      'nightly',
      { holdUntil: null, runs: [run('web-3:4242', 'billing-1'), run('web-2:17')] },
      at,
    );
    const rows = text.split('\n').slice(2);
    expect(rows.map((line) => line.trim().split(/ {2,}/)[1])).toEqual(['billing-1 (web-3:4242)', 'web-2:17']);
  });

  it('an identity that already starts with host:pid (the default one) is not repeated', () => {
    const text = historyText('nightly', { holdUntil: null, runs: [run('web-3:4242', 'web-3:4242:9f0c1a2b')] }, at);
    expect(text.split('\n')[2].trim().split(/ {2,}/)[1]).toBe('web-3:4242:9f0c1a2b');
  });

  it("list's last run says the same", () => {
    const { startedAt, endedAt, ...rest } = run('web-3:4242', 'billing-1');
    const lastRun = { ...rest, startedAt: new Date(startedAt), endedAt: new Date(endedAt) };
    const text = queueText({ kind: 'lock', name: 'nightly', holders: [], waiters: [], lastRun }, at + 12_000);
    expect(text).toContain('last run: ok by billing-1 (web-3:4242), started 12 s ago');
  });
});
