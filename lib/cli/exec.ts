import { constants } from 'node:os';

import { LockAbortedError, LockTimeoutError, LockUnavailableError } from '../core/errors/errors.js';
import type { LockHandle } from '../core/port/lock-backend.js';
import { longTimeout, type LongTimeout } from '../core/util/long-timeout.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import type { ExecRequest } from './args.js';
import { cliMessages } from './messages.js';
import { ProcessGroup } from './process-group.js';

/** `exec`'s own exit codes, above what commands commonly use and below the shell's 126-128+n. */
export const EXEC_EXIT = {
  unavailable: 3,
  timedOut: 120,
  skipped: 121,
  lost: 122,
  maxHold: 123,
  notExecutable: 126,
  notFound: 127,
} as const;

/**
 * Sent on to the command's process group while it runs; before it runs, they cancel the
 * wait for the lock. The terminal's Ctrl-C and Ctrl-\ reach only exec (the command is not
 * in the terminal's foreground group), so exec passes them on.
 */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

/** As shells report a process killed by a signal. */
const bySignal = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0);

const say = (text: string): void => void process.stderr.write(`nestjs-zk-lock: ${text}\n`);

/**
 * `exec <name> -- <command>`: takes the lock, runs the command while it is held, releases
 * it once the command has exited (whatever happened), and returns the exit code.
 * `waitMs`: how long the lock may be waited for.
 */
export async function runExec(
  backend: ZkLockBackend,
  name: string,
  exec: ExecRequest,
  waitMs: number,
): Promise<number> {
  const cancel = new AbortController();
  let received: NodeJS.Signals | undefined;
  let forward: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
    if (forward) forward(signal);
    else cancel.abort();
  };
  for (const signal of FORWARDED) process.on(signal, onSignal);
  try {
    let lock: LockHandle | null;
    try {
      lock = exec.skipIfLocked
        ? await backend.tryAcquire(name, { mode: exec.mode, signal: cancel.signal })
        : await backend.acquire(name, { mode: exec.mode, timeoutMs: waitMs, signal: cancel.signal });
    } catch (error) {
      if (error instanceof LockAbortedError && received) return bySignal(received);
      if (error instanceof LockTimeoutError) {
        // In the flag's terms when the operator gave one (the library's words name its own options).
        say(
          Number.isFinite(exec.waitMs)
            ? cliMessages.execTimeout(name, exec.mode, exec.waitMs)
            : `${error.message}: the command was not run`,
        );
        return EXEC_EXIT.timedOut;
      }
      if (error instanceof LockUnavailableError) {
        say(`${error.message}: the command was not run`);
        return EXEC_EXIT.unavailable;
      }
      throw error;
    }
    if (!lock) {
      say(`"${name}" is locked: skipped, the command was not run`);
      return EXEC_EXIT.skipped;
    }
    try {
      // A signal that came while the lock was being granted is the command's to hear: it is not started.
      if (received) return bySignal(received);
      return await runHolding(lock, exec, (send) => (forward = send));
    } finally {
      forward = undefined;
      await lock.release();
    }
  } finally {
    for (const signal of FORWARDED) process.off(signal, onSignal);
  }
}

/**
 * Runs the command while `lock` is held, in a process group of its own; stops the whole
 * group when the lock is lost or held past `--max-hold`. Returns once no process of the
 * group runs any more: what the command started in the background still works under the lock.
 */
async function runHolding(
  lock: LockHandle,
  exec: ExecRequest,
  forwardTo: (send: (signal: NodeJS.Signals) => void) => void,
): Promise<number> {
  const group = new ProcessGroup(exec.command, exec.args);
  let forwarded = false;
  forwardTo((signal) => {
    forwarded = true;
    group.signal(signal);
  });
  let stoppedFor: 'lost' | 'max-hold' | undefined;
  let killTimer: LongTimeout | undefined;
  const stop = (why: 'lost' | 'max-hold', reason: string): void => {
    // A command whose group is all gone did its work under the lock: not "stopped".
    if (stoppedFor || group.isGone()) return;
    stoppedFor = why;
    say(reason);
    say(`stopping the command and its process group (SIGTERM, SIGKILL in ${exec.killGraceMs} ms)`);
    group.signal('SIGTERM');
    killTimer = longTimeout(() => group.signal('SIGKILL'), exec.killGraceMs);
  };
  const onLost = (): void => stop('lost', (lock.signal.reason as Error).message);
  lock.signal.addEventListener('abort', onLost, { once: true });
  if (lock.signal.aborted) onLost();
  const maxHold = longTimeout(
    () => stop('max-hold', `"${lock.name}" held for --max-hold ${exec.maxHoldMs} ms.`),
    exec.maxHoldMs,
  );
  // Ctrl-Z reaches exec, not the command (not in the terminal's foreground group): stopping
  // exec alone would let its session expire, and the lock go, while the command runs on.
  const onStop = (): void => say(cliMessages.execNotStopped);
  process.on('SIGTSTP', onStop);
  try {
    const ended = await group.leaderEnded;
    if (ended instanceof Error) {
      say(`cannot run ${exec.command}: ${ended.message}`);
      return ended.code === 'ENOENT' ? EXEC_EXIT.notFound : EXEC_EXIT.notExecutable;
    }
    const left = group.running();
    // Unasked, background work keeps the lock: said, as the operator may not expect it.
    if (!stoppedFor && !forwarded && left.length > 0) say(cliMessages.execGroupLeft(lock.name, ended, left));
    await group.gone();
    if (stoppedFor) return stoppedFor === 'lost' ? EXEC_EXIT.lost : EXEC_EXIT.maxHold;
    return ended.signal ? bySignal(ended.signal) : (ended.code ?? 1);
  } finally {
    process.off('SIGTSTP', onStop);
    killTimer?.clear();
    maxHold.clear();
    lock.signal.removeEventListener('abort', onLost);
  }
}
