// A benchmark in small, for the resume guard's test: it starts a process (`sleep`), takes a
// resume guard for it, stops it (SIGSTOP) and prints `{"stopped":pid}`, then waits for the
// test to kill it, as a user kills a benchmark mid-pause.
import { spawn } from 'node:child_process';

import { resumeGuard } from '../../bench/support/resume-guard.js';

const { guardMs } = JSON.parse(process.argv[2]) as { guardMs: number };
const target = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
target.unref();
resumeGuard(target.pid!, guardMs);
process.kill(target.pid!, 'SIGSTOP');
process.stdout.write(`${JSON.stringify({ stopped: target.pid })}\n`);
setInterval(() => undefined, 60_000);
