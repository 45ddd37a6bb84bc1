import { parseArgs } from 'node:util';

/** What the operator asked for, from the command line and the environment. */
export interface CliRequest {
  readonly command: 'list' | 'show' | 'revoke' | 'release' | 'help';
  /** `list`'s prefix, or the lock name of `show`, `revoke`, `release`. */
  readonly target: string | undefined;
  readonly connect: string;
  readonly root: string;
  readonly json: boolean;
  readonly yes: boolean;
  readonly force: boolean;
  readonly timeoutMs: number;
  readonly credentials: { readonly username: string; readonly password: string } | undefined;
}

/** A usage mistake: printed with the usage, exit code 2. */
export class CliUsageError extends Error {}

export const USAGE = `Usage: nestjs-zk-lock <command> [options]

Commands:
  list [prefix]            every lock (and lease semaphore) under the root, with holders and waiters
  show <name>              one lock's queue: holders and waiters in order, mode, identity, age, session
  revoke <name>            ask the lock's holders to release it (those that acquired with revocable: true)
  release <name> --force   delete the holders' nodes: the next waiter gets the lock at once, and a holder
                           still alive is NOT told. Asks first, unless --yes.

Options:
  --connect <hosts>   ZooKeeper connection string (default: $ZK_LOCK_CONNECT, else 127.0.0.1:2181)
  --root <path>       the lock root (default: $ZK_LOCK_ROOT, else /locks)
  --json              machine-readable output
  --yes               do not ask before release --force
  --timeout <ms>      how long to try to connect (default 5000)
  -h, --help          this text
Credentials (when the locks have ACLs): $ZK_LOCK_USERNAME and $ZK_LOCK_PASSWORD.

Exit codes: 0 done; 1 failed (ZooKeeper refused it, or nothing to act on); 2 usage; 3 no server answered; 4 not confirmed.`;

const COMMANDS = ['list', 'show', 'revoke', 'release', 'help'] as const;

export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv): CliRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        connect: { type: 'string' },
        root: { type: 'string' },
        json: { type: 'boolean', default: false },
        yes: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        timeout: { type: 'string' },
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
  if (extra.length > 0) throw new CliUsageError(`unexpected arguments: ${extra.join(' ')}`);
  if (command !== 'list' && command !== 'help' && !target) throw new CliUsageError(`${command} needs a lock name`);
  if (command === 'release' && !values.force)
    throw new CliUsageError("release deletes the holders' nodes under them: add --force to mean it (try revoke first)");
  return request(command as CliRequest['command'], target, values, env);
}

function request(
  command: CliRequest['command'],
  target: string | undefined,
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): CliRequest {
  const timeoutMs = values.timeout === undefined ? 5000 : Number(values.timeout);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)
    throw new CliUsageError(
      `--timeout needs a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}, not "${values.timeout}"`,
    );
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
