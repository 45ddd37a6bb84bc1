import { spawn } from 'node:child_process';

/** A pending `SIGCONT` for a process about to be stopped; `cancel()` once it is resumed. */
export interface ResumeGuard {
  cancel(): void;
}

/**
 * Sends `SIGCONT` to `pid` in `afterMs`, from a process of its own (detached: a session and
 * group of its own, so a Ctrl-C or a kill of this one does not reach it).
 *
 * A process stopped with `SIGSTOP` cannot end itself: if the benchmark that stopped it is
 * killed before it resumes it, the process stays stopped for ever, holding its connections
 * (and a worker's lock, until the server gives up on it). Taken before the `SIGSTOP` and
 * cancelled after the `SIGCONT`, the guard resumes it anyway; a peer worker then finds its
 * parent gone and exits.
 */
export function resumeGuard(pid: number, afterMs: number): ResumeGuard {
  if (!Number.isInteger(pid) || pid <= 0) throw new RangeError(`resumeGuard: a process id, not ${pid}`);
  const seconds = (Math.max(0, afterMs) / 1000).toFixed(3);
  const guard = spawn('sh', ['-c', `sleep ${seconds}; kill -CONT ${pid}`], { detached: true, stdio: 'ignore' });
  guard.on('error', () => undefined); // no sh: the benchmark goes on without the guard
  guard.unref();
  return {
    cancel(): void {
      if (guard.pid === undefined || guard.exitCode !== null || guard.signalCode !== null) return;
      try {
        process.kill(-guard.pid, 'SIGKILL'); // the group: sh and its sleep
      } catch {
        // gone already
      }
    },
  };
}
