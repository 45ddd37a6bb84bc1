/**
 * The CLI's own words for what went wrong. They name the CLI's flags and environment
 * variables (`--connect`, `$ZK_LOCK_CONNECT`, `--timeout`, `--root`), not the library's
 * options: an operator at a shell has no `connectTimeoutMs` to raise.
 */

/** Where the connection string came from, as the operator would fix it. */
const CONNECT = '--connect (or $ZK_LOCK_CONNECT)';

export const cliMessages = {
  timeout: (connect: string, timeoutMs: number): string =>
    `No ZooKeeper server answered at "${connect}" within ${timeoutMs} ms. Check that ${CONNECT} names a running server, or raise --timeout.`,
  refused: (connect: string): string =>
    `Every server at "${connect}" refused the connection: nothing listens there. Start ZooKeeper there, or fix ${CONNECT}.`,
  unresolved: (connect: string, hosts: readonly string[], why: string): string =>
    `Cannot resolve ${hosts.map((host) => `"${host}"`).join(', ')} of "${connect}" (DNS: ${why}). Fix the host name in ${CONNECT}, or the machine's DNS.`,
  badConnect: (detail: string): string => `${detail} Set it with ${CONNECT}.`,
  badRoot: (root: string, expected: string): string =>
    `--root (or $ZK_LOCK_ROOT) "${root}" is not usable: ${expected}.`,
  rootMissing: (root: string, connect: string): string =>
    `No lock root "${root}" at "${connect}": nothing has been locked under it. Check --root (or $ZK_LOCK_ROOT; the default is /locks): it must be the rootPath the applications use, and a chroot in ${CONNECT} moves it.`,
  noAuth: '(the nodes have ACLs: set $ZK_LOCK_USERNAME and $ZK_LOCK_PASSWORD)',
  execTimeout: (name: string, mode: string, timeoutMs: number): string =>
    `"${name}" (${mode}) was not granted within --timeout ${timeoutMs} ms (connecting and waiting share it): the command was not run. Wait longer (raise --timeout), or see who holds it with: nestjs-zk-lock show ${name}`,
  execGroupLeft: (
    name: string,
    ended: { readonly code: number | null; readonly signal: NodeJS.Signals | null },
    pids: readonly number[] | 'unknown',
  ): string =>
    `the command ${ended.signal ? `was killed by ${ended.signal}` : `exited with ${ended.code}`}, but processes it started are still running in its process group${pids === 'unknown' ? '' : ` (pid ${pids.join(', ')})`}: "${name}" stays locked until they have exited (--max-hold, or a signal sent to exec, stops them)`,
  execNotStopped:
    'SIGTSTP (Ctrl-Z) ignored: exec stopped alone would let its ZooKeeper session expire, and the lock go, while the command runs on; the command keeps running',
} as const;
