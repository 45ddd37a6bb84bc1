import { lookup } from 'node:dns/promises';

import { InvalidOptionError, ZkConnectionError } from '../core/errors/errors.js';
import { deadline } from '../core/util/deadline.js';
import { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import type { CliRequest } from './args.js';
import { CliNoServerError, CliRootMissingError, CliUnresolvedHostError, CliUsageError } from './errors.js';
import { cliMessages } from './messages.js';

/**
 * The connect string's host names (`host:port,host:port/chroot`), for the DNS check; none
 * when it is not of that shape (the client's own check then says what is wrong with it).
 */
export function hostsOf(connect: string): string[] {
  const servers = connect.split('/')[0].split(',');
  const hosts = servers.map((server) => /^([A-Za-z0-9.\-_]+):\d{1,5}$/.exec(server)?.[1]);
  return hosts.every((host) => host !== undefined) ? [...new Set(hosts as string[])] : [];
}

/**
 * Fails fast, naming the host, when no host of the connect string resolves: the ZooKeeper
 * client would retry the lookup until `--timeout` and then blame the server. Each host is
 * looked up as the client will (`dns.lookup`, the system resolver and /etc/hosts). When
 * only some resolve, the client tries those. A resolver that does not answer within
 * `timeoutMs` counts as a failure too.
 */
export async function resolveHosts(connect: string, timeoutMs: number): Promise<void> {
  const hosts = hostsOf(connect);
  if (hosts.length === 0) return;
  const slow = deadline(timeoutMs, () => new Error(`no answer within ${timeoutMs} ms`));
  const gaveUp = new Promise<never>((_, reject) =>
    slow.signal.addEventListener('abort', () => reject(slow.signal.reason as Error), { once: true }),
  );
  gaveUp.catch(() => undefined); // only raced below; never left unhandled
  try {
    const failures = await Promise.all(
      hosts.map((host) =>
        Promise.race([lookup(host), gaveUp]).then(
          () => undefined,
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        ),
      ),
    );
    if (failures.every((why) => why !== undefined))
      throw new CliUnresolvedHostError(connect, hosts, [...new Set(failures)].join(', '));
  } finally {
    slow.clear();
  }
}

/**
 * The backend for a CLI command, connected to `--connect` within `--timeout`; a failure
 * to connect is a `CliNoServerError` worded with the CLI's flags.
 */
export async function connectBackend(request: CliRequest): Promise<ZkLockBackend> {
  const { connect, timeoutMs } = request;
  const started = performance.now();
  await resolveHosts(connect, timeoutMs);
  try {
    return await ZkLockBackend.connect({
      connectionString: connect,
      rootPath: request.root,
      // --timeout covers the lookups and the connect together.
      connectTimeoutMs: Math.max(1, Math.floor(timeoutMs - (performance.now() - started))),
      // exec's node names the host and process that run the command (the default), for `show`.
      ...(!request.exec && { identity: 'nestjs-zk-lock-cli' }),
      ...(request.credentials && { credentials: request.credentials }),
    });
  } catch (error) {
    if (error instanceof ZkConnectionError) throw new CliNoServerError(inCliWords(error, timeoutMs), connect, error);
    // The flags and variables the options came from: `--root` is the only one the client checks itself.
    if (error instanceof InvalidOptionError && error.option === 'rootPath')
      throw new CliUsageError(cliMessages.badRoot(request.root, error.expected), { cause: error });
    throw error;
  }
}

function inCliWords(error: ZkConnectionError, timeoutMs: number): string {
  switch (error.reason) {
    case 'timeout':
      return cliMessages.timeout(error.connectionString, timeoutMs);
    case 'refused':
      return cliMessages.refused(error.connectionString);
    case 'connection-string':
      return cliMessages.badConnect(error.message);
    default:
      return error.message; // a missing chroot, an unfit server: the server's facts, no library option to raise
  }
}

/**
 * `list`, `show`, `history`, `revoke` and `release` read under the root: a root that does not exist
 * (a typo, or another chroot) would answer "free" for every lock, so it is an error.
 */
export async function assertRootExists(backend: ZkLockBackend, request: CliRequest): Promise<void> {
  if (!(await backend.client.session.exists(request.root)))
    throw new CliRootMissingError(request.root, request.connect);
}
