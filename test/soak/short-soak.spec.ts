import { execFile } from 'node:child_process';
import { join } from 'node:path';

import { checkGrowth } from '../../scripts/soak/growth.check';
import { GROWTH_RULES } from '../../scripts/soak/growth.limits';
import type { SoakResult } from '../../scripts/soak/soak.driver';
import { SHORT } from '../../scripts/soak/soak.options';

const ROOT = join(__dirname, '..', '..');

/**
 * The soak's driver (scripts/soak) in its own Node process: heap figures need --expose-gc
 * and a process that runs nothing else; it starts and stops its own ZooKeeper. Its stdout
 * ends with one JSON line holding every figure.
 */
function runShortSoak(): Promise<{ code: number | null; result: SoakResult | undefined; output: string }> {
  const args = [
    '--expose-gc',
    '--disable-warning=ExperimentalWarning',
    '-r',
    join(ROOT, 'scripts', 'ts-register.cjs'),
    join(ROOT, 'scripts', 'soak', 'soak.main.ts'),
    '--short',
    '--json',
  ];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const last = stdout.trimEnd().split('\n').pop() ?? '';
        const result = last.startsWith('{') ? (JSON.parse(last) as SoakResult) : undefined;
        resolve({
          code: error ? ((error as { code?: number }).code ?? null) : 0,
          result,
          output: `${stdout}\n${stderr}`,
        });
      },
    );
  });
}

describe('short soak: lock cycles with contention and reconnects leak nothing', () => {
  let run: Awaited<ReturnType<typeof runShortSoak>>;
  let result: SoakResult;
  beforeAll(async () => {
    run = await runShortSoak();
    if (!run.result) throw new Error(`the soak printed no result (exit ${run.code}):\n${run.output}`);
    result = run.result;
  }, 120_000);

  it('passes its own checks and exits 0', () => {
    expect({ failures: result.failures, code: run.code }).toEqual({ failures: [], code: 0 });
  });

  it('ran the cycles it was asked for, with contention, waits cut short and reconnects', () => {
    expect(result.cycles).toBe(SHORT.cycles);
    expect(result.checkpoints).toHaveLength(SHORT.checkpoints! + 1);
    const { stats } = result;
    expect(stats.busy).toBeGreaterThan(0); // tryAcquire / skip found the lock taken
    expect(stats.waited).toBeGreaterThan(0); // acquires queued behind another holder
    expect(stats.timedOut).toBeGreaterThan(0);
    expect(stats.aborted).toBeGreaterThan(0);
    expect(result.drops).toBe(Math.floor(SHORT.cycles! / SHORT.reconnectEvery!));
    expect(result.reconnects).toBeGreaterThanOrEqual(result.drops * 0.9);
  });

  it('kept every lock exclusive and every session alive, with no unexpected error', () => {
    expect(result.stats.exclusionViolations).toBe(0);
    expect(result.stats.errors).toEqual([]);
    expect({ lost: result.sessionsLost, replaced: result.sessionsChanged }).toEqual({ lost: 0, replaced: 0 });
  });

  it('shows no growth in heap, live objects, server watches, timers, handles or the library counts', () => {
    const verdicts = checkGrowth(result.checkpoints, GROWTH_RULES, SHORT.warmupCheckpoints! + 1);
    expect(verdicts.map((v) => v.metric).sort()).toEqual(GROWTH_RULES.map((r) => r.metric).sort());
    expect(verdicts.filter((v) => v.failed)).toEqual([]);
  });

  it('holds nothing once idle: no watch, watcher, wait or request left', () => {
    const idle = result.checkpoints[result.checkpoints.length - 1].values;
    const { serverWatches, watchers, rawWatchPaths, heldOrWaiting, pendingRequests } = idle;
    expect({ serverWatches, watchers, rawWatchPaths, heldOrWaiting, pendingRequests }).toEqual({
      serverWatches: 0,
      watchers: 0,
      rawWatchPaths: 0,
      heldOrWaiting: 0,
      pendingRequests: 0,
    });
  });

  it('leaves no znode, watch or session on the server once every client closed', () => {
    expect(result.end).toEqual({ nodesLeft: [], watchesLeft: 0, sessionsLeft: 0 });
  });
});
