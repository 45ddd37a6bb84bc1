import { InvalidOptionError, ZkConnectionError } from '../../errors/errors.js';
import { lockMessages } from '../../errors/messages.js';
import { validateRootPath } from '../../naming/root-path.js';
import { wholeMilliseconds } from '../../port/options.js';
import { MAX_TIMER_MS } from '../../util/long-timeout.js';
import { ZkCredentials, type ZkDigestCredentials } from './zk-credentials.js';

export interface ZkClientOptions {
  /** `host:port[,host:port…][/chroot]`, e.g. `127.0.0.1:2181`. */
  readonly connectionString: string;
  /**
   * Requested session timeout; the server clamps it to [2, 20] × its tickTime (its
   * `minSessionTimeout`/`maxSessionTimeout`). Default 10 s; at most 2147483647 ms (2^31 - 1),
   * the most ZooKeeper's protocol can carry.
   */
  readonly sessionTimeoutMs?: number;
  /**
   * How long the first connect may take before failing. Default 10 s; any whole number of
   * milliseconds above 0. When every server refuses the connection (nothing listens
   * there), it fails after 2 s instead.
   */
  readonly connectTimeoutMs?: number;
  /**
   * ZooKeeper digest credentials. When set, every node the library creates gets an ACL
   * that lets only these credentials delete or change it (anyone may read it).
   */
  readonly credentials?: ZkDigestCredentials;
}

export interface ResolvedZkClientOptions extends Required<Omit<ZkClientOptions, 'credentials'>> {
  readonly credentials: ZkCredentials | undefined;
}

export const ZK_CLIENT_DEFAULTS = Object.freeze({
  sessionTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
});

/** Delay between rounds of reconnect attempts over all servers. */
export const SPIN_DELAY_MS = 250;
/**
 * How long the first connect waits when every server refuses the connection (nothing
 * listens there) before failing, instead of the whole `connectTimeoutMs`.
 */
export const REFUSED_CONNECT_MS = 2_000;

/** Validates and completes client options; throws a typed error naming the bad option. */
export function resolveZkClientOptions(options: ZkClientOptions): ResolvedZkClientOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', options, 'an object with at least a connectionString');
  }
  validateConnectionString(options.connectionString);
  return {
    connectionString: options.connectionString,
    // ZooKeeper's connect request carries the timeout as a 32-bit int, and the session's
    // own timers (derived from it) stay within setTimeout's range.
    sessionTimeoutMs: positiveInteger(
      'sessionTimeoutMs',
      options.sessionTimeoutMs,
      ZK_CLIENT_DEFAULTS.sessionTimeoutMs,
      MAX_TIMER_MS,
    ),
    connectTimeoutMs: positiveInteger(
      'connectTimeoutMs',
      options.connectTimeoutMs,
      ZK_CLIENT_DEFAULTS.connectTimeoutMs,
    ),
    credentials: ZkCredentials.from(options.credentials),
  };
}

function positiveInteger(option: string, value: unknown, fallback: number, max?: number): number {
  return value === undefined ? fallback : wholeMilliseconds(option, value, 1, max);
}

function validateConnectionString(value: unknown): asserts value is string {
  const fail = (why: string): never => {
    throw new ZkConnectionError(
      lockMessages.badConnectionString(value, why),
      String(value),
      undefined,
      'connection-string',
    );
  };
  if (typeof value !== 'string' || value.trim() === '') fail('it must be a non-empty string');
  const text = value as string;
  const slash = text.indexOf('/');
  const hosts = slash < 0 ? text : text.slice(0, slash);
  if (slash >= 0) {
    try {
      validateRootPath(text.slice(slash));
    } catch {
      fail(`the chroot "${text.slice(slash)}" is not a valid absolute path`);
    }
  }
  for (const server of hosts.split(',')) {
    if (server.startsWith('['))
      fail(
        `"${server}": node-zookeeper-client 1.1.3 cannot parse IPv6 literals; use a host name that resolves to the address`,
      );
    const match = /^([A-Za-z0-9.\-_]+):(\d{1,5})$/.exec(server);
    if (!match) fail(`"${server}" is not host:port`);
    const port = Number(match![2]);
    if (port < 1 || port > 65535) fail(`port ${port} is out of range`);
  }
}

/** The chroot of a connection string (`host:port,host:port/chroot`), if any: the client prepends it to every path. */
export function chrootOf(connectionString: string): string | undefined {
  return connectionString.includes('/') ? connectionString.slice(connectionString.indexOf('/')) : undefined;
}
