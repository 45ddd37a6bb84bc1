import { readFileSync } from 'node:fs';

/**
 * Process `pid`'s scheduler state from /proc (`S` sleeping, `R` running, `T` stopped...),
 * or undefined once it is gone.
 */
export function processState(pid: number | undefined): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}
