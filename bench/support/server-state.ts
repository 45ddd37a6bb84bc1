import { fourLetter } from '../../lib/core/zookeeper/session/four-letter.js';

/** What a server's `srvr` says: its mode and the last transaction it processed. */
export interface ServerState {
  /** `leader`, `follower` or `standalone`; null when it did not say. */
  readonly mode: string | null;
  readonly zxid: bigint;
}

/** `srvr` of the server at `address` (`host:port`; the first of a connection string, its chroot ignored). */
export async function serverState(address: string): Promise<ServerState> {
  const [host, port] = address.split(',')[0].split('/')[0].split(':');
  const reply = await fourLetter(host, Number(port), 'srvr');
  const zxid = /^Zxid: (0x[0-9a-f]+)$/m.exec(reply)?.[1];
  if (!zxid) throw new Error(`srvr on ${address} gave no Zxid line: ${reply.slice(0, 200)}`);
  return { mode: /^Mode: (\w+)/m.exec(reply)?.[1] ?? null, zxid: BigInt(zxid) };
}

/**
 * The server's last zxid: every transaction (a create, a delete, a session's start or end,
 * a multi as one) adds one, so its growth counts the transactions committed meanwhile.
 */
export async function lastZxid(address: string): Promise<bigint> {
  return (await serverState(address)).zxid;
}

/** Each server of a connection string as a connection string of its own (`a:1,b:2/root` → `a:1/root`, `b:2/root`). */
export function serversOf(connectionString: string): string[] {
  const slash = connectionString.indexOf('/');
  const [hosts, chroot] =
    slash < 0 ? [connectionString, ''] : [connectionString.slice(0, slash), connectionString.slice(slash)];
  return hosts
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean)
    .map((host) => host + chroot);
}
