// A benchmark in small, for the resume guard's test: it starts a process (`sleep`), takes a
// resume guard for it, stops it (SIGSTOP) and prints `{"stopped":pid}` once /proc shows it
// stopped, then waits for the test to kill it, as a user kills a benchmark mid-pause. It
// never sends SIGCONT itself: only the guard can resume the process.
import { spawn } from 'node:child_process';

import { resumeGuard } from '../../bench/support/resume-guard.js';
import { processState } from '../support/process-state.js';

const { guardMs } = JSON.parse(process.argv[2]) as { guardMs: number };
const target = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
target.unref();
resumeGuard(target.pid!, guardMs);
process.kill(target.pid!, 'SIGSTOP');
// A signal takes effect when the target next runs: on a loaded machine, not at once.
const seen = setInterval(() => {
  if (processState(target.pid) !== 'T') return;
  clearInterval(seen);
  process.stdout.write(`${JSON.stringify({ stopped: target.pid })}\n`);
}, 5);
setInterval(() => undefined, 60_000);
