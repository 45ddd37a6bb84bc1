import { ZkLockError } from '../core/errors/errors.js';
import { cliMessages } from './messages.js';

/**
 * The CLI's exit codes for every command but `exec`, which adds its own (see `EXEC_EXIT`).
 * docs/operations.md and `USAGE` list them; scripts switch on them.
 */
export const CLI_EXIT = {
  done: 0,
  /** ZooKeeper refused the request, or there was nothing to act on. */
  failed: 1,
  usage: 2,
  /** No server answered (nothing listens, a timeout, a host name DNS cannot resolve). */
  noServer: 3,
  notConfirmed: 4,
  /** The lock root does not exist. */
  noRoot: 5,
  /** `revoke`: a holder did not opt in to revocation, and was not asked. */
  notOptedIn: 6,
} as const;

/** A failure of the CLI itself: a stable `code` and the process exit code it ends with. */
export abstract class CliError extends ZkLockError {
  abstract readonly exitCode: number;
}

/** A usage mistake: printed with the usage (as text), exit code 2. */
export class CliUsageError extends CliError {
  readonly code = 'CLI_USAGE';
  readonly exitCode = CLI_EXIT.usage;
}

/** No ZooKeeper server could be reached at `--connect`, worded for the operator. */
export class CliNoServerError extends CliError {
  readonly code: string = 'CLI_NO_SERVER';
  readonly exitCode = CLI_EXIT.noServer;

  constructor(
    message: string,
    readonly connect: string,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}

/** The connect string's hosts: none resolves, so no server can answer (a typo, or DNS down). */
export class CliUnresolvedHostError extends CliNoServerError {
  override readonly code = 'CLI_HOST_UNRESOLVED';

  constructor(
    connect: string,
    readonly hosts: readonly string[],
    why: string,
  ) {
    super(cliMessages.unresolved(connect, hosts, why), connect);
  }
}

/**
 * `--root` names no node: listing it would answer "free" for every lock, and asking or
 * releasing would act on nothing. A typo'd root, or a chroot the applications do not use.
 */
export class CliRootMissingError extends CliError {
  readonly code = 'CLI_ROOT_MISSING';
  readonly exitCode = CLI_EXIT.noRoot;

  constructor(
    readonly root: string,
    connect: string,
  ) {
    super(cliMessages.rootMissing(root, connect));
  }
}
