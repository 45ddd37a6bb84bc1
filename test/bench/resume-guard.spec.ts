import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

import { resumeGuard } from '../../bench/support/resume-guard';
import { processState } from '../support/process-state';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';

/** A process to stop: `sleep`, in a group of its own so that nothing else signals it. */
function sleeper(): number {
  const child = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid!;
}

const stopped = (pid: number): boolean => processState(pid) === 'T';
const end = (pid: number): void => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
};

/** A process stopped by a benchmark that is killed before it resumes it must not stay stopped. */
describe('resumeGuard: a stopped process outlives a killed benchmark only stopped for a while', () => {
  it('resumes the process once the guard time is up, though the process that stopped it was killed', async () => {
    const parent = WorkerProcess.spawn('pausing-parent.worker.ts', { guardMs: 3_000 });
    let pid: number | undefined;
    try {
      pid = (JSON.parse(await parent.line((line) => line.includes('stopped'), 'the stop')) as { stopped: number })
        .stopped;
      // The parent saw it stopped, and never resumes it: only the guard can. (Not read here
      // again: on a loaded machine this line may come after the guard already fired.)
      await parent.kill(); // SIGKILL: no handler of the parent's can resume it
      await waitUntil(() => processState(pid) === 'S', 'the stopped process resumed');
    } finally {
      if (pid !== undefined) end(pid);
      await parent.kill();
    }
  });

  it('once cancelled, sends nothing: a process stopped again stays stopped', async () => {
    const pid = sleeper();
    try {
      // The guard's time is long beside the wait to see the stop (it must not fire before the cancel).
      const guard = resumeGuard(pid, 2_000);
      process.kill(pid, 'SIGSTOP');
      await waitUntil(() => stopped(pid), 'the stop');
      guard.cancel();
      await sleep(3_000); // past the guard's time
      expect(processState(pid)).toBe('T');
    } finally {
      end(pid);
    }
  });

  it('refuses what is not a process id', () => {
    expect(() => resumeGuard(0, 100)).toThrow(RangeError);
    expect(() => resumeGuard(Number.NaN, 100)).toThrow(/a process id, not NaN/);
  });
});
