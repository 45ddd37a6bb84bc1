import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How the group's leader (the command itself) ended, or why it could not be started. */
export type LeaderEnd =
  { readonly code: number | null; readonly signal: NodeJS.Signals | null } | NodeJS.ErrnoException;

/** Where this system lists its processes, each with its state and process group (Linux). */
const PROC = '/proc';

/**
 * A command run as the leader of a process group (and session) of its own, as Node's
 * `detached` does on POSIX, so that whatever it starts (`sh -c`'s children, a script's
 * workers) is signalled with it and waited for, as coreutils `timeout` signals its
 * command's group. A process that leaves the group (`setsid`, a daemon's double fork) is
 * not followed.
 */
export class ProcessGroup {
  /** Settles once the leader has exited, or could not be started. */
  readonly leaderEnded: Promise<LeaderEnd>;
  private readonly leader: ChildProcess;

  constructor(command: string, args: readonly string[]) {
    this.leader = spawn(command, args, { stdio: 'inherit', detached: true });
    this.leaderEnded = new Promise((resolve) => {
      this.leader.once('exit', (code, signal) => resolve({ code, signal }));
      this.leader.once('error', resolve);
    });
  }

  /** Sends `signal` to every process of the group; a group already gone is left alone. */
  signal(signal: NodeJS.Signals | 0): void {
    if (this.leader.pid === undefined) return;
    try {
      process.kill(-this.leader.pid, signal);
    } catch (error) {
      // ESRCH: nobody left; EPERM: only members that changed user (a setuid program) are left.
      if (!['ESRCH', 'EPERM'].includes((error as NodeJS.ErrnoException).code!)) throw error;
    }
  }

  /**
   * The group's processes that still run (zombies, which have exited, are not counted):
   * empty once the group is gone. Where there is no `/proc`, the group counts as running
   * as long as the system still knows it, zombies included.
   */
  running(): readonly number[] | 'unknown' {
    const pgid = this.leader.pid;
    if (pgid === undefined) return [];
    try {
      process.kill(-pgid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return [];
    }
    // The group still answers, but its members may all be zombies: an orphan is reparented
    // to PID 1, and a PID 1 that never reaps (a container's init that is no init) leaves it
    // one for good. So the members' states are read.
    let pids: string[];
    try {
      pids = readdirSync(PROC).filter((entry) => /^\d+$/.test(entry));
    } catch {
      return 'unknown';
    }
    return pids.map(Number).filter((pid) => {
      const stat = readStat(pid);
      return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X';
    });
  }

  /** No process of the group runs any more (as `gone()` waits for, checked once). */
  isGone(): boolean {
    const leaderEnded = this.leader.exitCode !== null || this.leader.signalCode !== null || !this.leader.pid;
    const running = this.running();
    return leaderEnded && running !== 'unknown' && running.length === 0;
  }

  /** Settles once no process of the group runs: the leader has exited, and everything it started too. */
  async gone(): Promise<void> {
    await this.leaderEnded;
    // Twice in a row: a member that forks and exits between the listing of /proc and the
    // read of its own state leaves a child the first listing did not have.
    for (let pause = 5, emptyTimes = 0; emptyTimes < 2; pause = Math.min(2 * pause, 200)) {
      const running = this.running();
      emptyTimes = running !== 'unknown' && running.length === 0 ? emptyTimes + 1 : 0;
      if (emptyTimes < 2) await sleep(pause);
    }
  }
}

/** A process's state letter and process group, from /proc/<pid>/stat; undefined once it is gone. */
function readStat(pid: number): { state: string; pgrp: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${PROC}/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, pgrp: Number(pgrp) };
}
