import { parseArgs } from 'node:util';

import type { LockMode } from '../core/port/lock-backend.js';
import { CliUsageError } from './errors.js';

export { CliUsageError };

/** What `exec` runs, and how it holds the lock meanwhile. */
export interface ExecRequest {
  /** The program, run without a shell, and its arguments: everything after `--`. */
  readonly command: string;
  readonly args: readonly string[];
  readonly mode: LockMode;
  /** Exit at once, without running the command, when the lock is taken. */
  readonly skipIfLocked: boolean;
  /** `--timeout`, which connecting and waiting for the lock share; `Infinity` without it (connecting then gets 5 s). */
  readonly waitMs: number;
  /** Stop the command once the lock has been held this long; `Infinity` without `--max-hold`. */
  readonly maxHoldMs: number;
  /** Between SIGTERM and SIGKILL when the command is stopped. */
  readonly killGraceMs: number;
}

/** What the operator asked for, from the command line and the environment. */
export interface CliRequest {
  readonly command: 'list' | 'show' | 'history' | 'revoke' | 'release' | 'exec' | 'members' | 'partitions' | 'help';
  /** `list`'s prefix, the lock name of `show`, `history`, `revoke`, `release`, `exec`, or the group of `members` and `partitions`. */
  readonly target: string | undefined;
  readonly connect: string;
  readonly root: string;
  readonly json: boolean;
  readonly yes: boolean;
  readonly force: boolean;
  readonly timeoutMs: number;
  readonly credentials: { readonly username: string; readonly password: string } | undefined;
  /** Only for `exec`. */
  readonly exec?: ExecRequest;
}

export const USAGE = `Usage: nestjs-zk-lock <command> [options]

Commands:
  list [prefix]            every lock (and lease semaphore) under the root, with holders and waiters
  show <name>              one lock's queue: holders and waiters in order, mode, identity, age, session;
                           for a job (holdAtLeastMs or maxHoldMs), its last run and kept hold
  history <name>           a job's last runs, newest first: outcome, by whom, started, how long
  revoke <name>            ask the lock's holders to release it: those that opted in (revocable: true), and
                           other clients' (Curator's makeRevocable); exits 6 naming any that did not opt in
  release <name> --force   delete the holders' nodes: the next waiter gets the lock at once, and a holder
                           still alive is NOT told. Asks first, unless --yes.
  members <group>          a group's members (GroupMembership): id, data, since when, session
  partitions <group>       a Partitioner group: its members, and each part's owner, token, holder, since when, waiters
  exec <name> -- <command> [args...]
                           run the command (no shell, stdio passed through) in a process group of its own
                           while holding the lock; release it once no process of that group runs (what the
                           command left in the background too); exits with the command's exit code (128+n
                           when killed by signal n)

Options:
  --connect <hosts>   ZooKeeper connection string host:port[,host:port...][/chroot]
                      (default: $ZK_LOCK_CONNECT, else 127.0.0.1:2181)
  --root <path>       the lock root, the rootPath the applications use (default: $ZK_LOCK_ROOT, else
                      /locks); list, show, revoke and release fail with 5 when it does not exist
  --json              machine-readable output on stdout; a failure is one line on stderr:
                      {"error":{"code":"...","message":"...","exitCode":n}}
  --yes               do not ask before release --force
  --timeout <ms>      how long to try to connect (default 5000); for exec, to connect and get the lock
                      (default: 5000 to connect, then wait for the lock as long as it takes)
  -h, --help          this text
exec options:
  --mode read|write   write (the default) is exclusive; read is shared with other readers
  --skip-if-locked    exit with 121 at once, without running the command, when the lock is taken
  --max-hold <ms>     stop the command's group when the lock has been held this long, and release it
  --kill-grace <ms>   when the command is stopped: SIGTERM to its group, SIGKILL after this (default 10000)
  SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the CLI go to the command's group (Ctrl-C too: the terminal
  sends it to the CLI); Ctrl-Z is ignored while the command runs.
Credentials (when the locks have ACLs): $ZK_LOCK_USERNAME and $ZK_LOCK_PASSWORD.

Exit codes: 0 done; 1 failed (ZooKeeper refused it, or nothing to act on); 2 usage; 3 no server answered
(nothing listens, --timeout passed, or DNS cannot resolve the hosts); 4 not confirmed; 5 no such --root;
6 revoke: a holder did not opt in to revocation (not asked).
exec: the command's own code; else 2 usage, 3 no server answered, 120 lock not granted within --timeout,
121 skipped (--skip-if-locked, lock taken), 122 lock lost (command stopped), 123 --max-hold reached
(command stopped), 126 command not runnable, 127 command not found.`;

const COMMANDS = ['list', 'show', 'history', 'revoke', 'release', 'exec', 'members', 'partitions', 'help'] as const;

const EXEC_ONLY = ['mode', 'skip-if-locked', 'max-hold', 'kill-grace'] as const;

export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv): CliRequest {
  // What follows `--` is exec's command line, left as written (its own options included).
  const dashes = argv.indexOf('--');
  const own = dashes === -1 ? argv : argv.slice(0, dashes);
  const commandLine = dashes === -1 ? undefined : argv.slice(dashes + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...own],
      allowPositionals: true,
      options: {
        connect: { type: 'string' },
        root: { type: 'string' },
        json: { type: 'boolean', default: false },
        yes: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        timeout: { type: 'string' },
        mode: { type: 'string' },
        'skip-if-locked': { type: 'boolean' },
        'max-hold': { type: 'string' },
        'kill-grace': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command = 'help', target, ...extra] = positionals;
  if (values.help) return request('help', undefined, values, env);
  if (!(COMMANDS as readonly string[]).includes(command)) throw new CliUsageError(`unknown command "${command}"`);
  if (command === 'exec' && commandLine === undefined)
    throw new CliUsageError('exec needs -- and the command to run: exec <name> [options] -- <command> [args...]');
  if (extra.length > 0) throw new CliUsageError(`unexpected arguments: ${extra.join(' ')}`);
  if (command !== 'list' && command !== 'help' && !target)
    throw new CliUsageError(
      `${command} needs a ${command === 'members' || command === 'partitions' ? 'group' : 'lock'} name`,
    );
  if (command === 'release' && !values.force)
    throw new CliUsageError("release deletes the holders' nodes under them: add --force to mean it (try revoke first)");
  if (command === 'exec') return { ...request('exec', target, values, env), exec: execRequest(values, commandLine!) };
  if (commandLine !== undefined) throw new CliUsageError(`only exec takes a command after --, not ${command}`);
  const misplaced = EXEC_ONLY.find((option) => values[option] !== undefined);
  if (misplaced) throw new CliUsageError(`--${misplaced} is an option of exec, not of ${command}`);
  return request(command as CliRequest['command'], target, values, env);
}

function execRequest(values: Record<string, string | boolean | undefined>, commandLine: string[]): ExecRequest {
  const [command, ...args] = commandLine;
  if (!command) throw new CliUsageError('exec needs a command after --');
  const mode = (values.mode as string | undefined) ?? 'write';
  if (mode !== 'read' && mode !== 'write') throw new CliUsageError(`--mode is read or write, not "${mode}"`);
  return {
    command,
    args,
    mode,
    skipIfLocked: values['skip-if-locked'] === true,
    waitMs: values.timeout === undefined ? Infinity : milliseconds('timeout', values.timeout, 1),
    maxHoldMs: values['max-hold'] === undefined ? Infinity : milliseconds('max-hold', values['max-hold'], 1),
    killGraceMs: values['kill-grace'] === undefined ? 10_000 : milliseconds('kill-grace', values['kill-grace'], 0),
  };
}

/** A whole number of milliseconds from `min`, or a usage error naming the option. */
function milliseconds(option: string, value: string | boolean | undefined, min: number): number {
  const ms = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isSafeInteger(ms) || ms < min)
    throw new CliUsageError(
      `--${option} needs a whole number of milliseconds from ${min} to ${Number.MAX_SAFE_INTEGER}, not "${value}"`,
    );
  return ms;
}

function request(
  command: CliRequest['command'],
  target: string | undefined,
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): CliRequest {
  const timeoutMs = values.timeout === undefined ? 5000 : milliseconds('timeout', values.timeout, 1);
  const { ZK_LOCK_USERNAME: username, ZK_LOCK_PASSWORD: password } = env;
  if ((username === undefined) !== (password === undefined))
    throw new CliUsageError('set both ZK_LOCK_USERNAME and ZK_LOCK_PASSWORD, or neither');
  return {
    command,
    target,
    connect: (values.connect as string | undefined) ?? env.ZK_LOCK_CONNECT ?? '127.0.0.1:2181',
    root: (values.root as string | undefined) ?? env.ZK_LOCK_ROOT ?? '/locks',
    json: values.json === true,
    yes: values.yes === true,
    force: values.force === true,
    timeoutMs,
    credentials: username !== undefined && password !== undefined ? { username, password } : undefined,
  };
}
