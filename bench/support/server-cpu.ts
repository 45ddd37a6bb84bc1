import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time (user + system, every thread, in ns) the given processes have used so far, read
 * from /proc: the ZooKeeper servers the benchmark started. Counted in the kernel's ticks
 * (10 ms at USER_HZ 100), so a figure over a second is good to about 1%. A process that is
 * gone counts 0.
 */
export function processCpuNs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // not running
    }
  }
  return (ticks * 1e9) / TICKS_PER_SECOND;
}
