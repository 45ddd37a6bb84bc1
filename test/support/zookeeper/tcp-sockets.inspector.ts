import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** One TCP socket of a process, by its loopback ports (every address here is 127.0.0.1). */
export interface TcpSocket {
  localPort: number;
  remotePort: number;
  /** Hex state from the kernel's tcp_states.h: 01 ESTABLISHED, 02 SYN_SENT, 0A LISTEN… */
  state: string;
}

/** States in which a socket carries, or is setting up, a connection. */
const CONNECTED = new Set(['01', '02']);

/** The TCP sockets process `pid` holds open, read from /proc (Linux only). */
export function tcpSocketsOf(pid: number | 'self'): TcpSocket[] {
  const inodes = socketInodes(pid);
  // Java listens and connects through IPv6 sockets, which /proc lists in tcp6.
  return ['tcp', 'tcp6']
    .flatMap((table) => readTable(pid, table))
    .filter((row) => inodes.has(row.inode))
    .map(({ localPort, remotePort, state }) => ({ localPort, remotePort, state }));
}

/** The sockets of `pid` that are connected or connecting. */
export function tcpConnectionsOf(pid: number | 'self'): TcpSocket[] {
  return tcpSocketsOf(pid).filter((socket) => CONNECTED.has(socket.state));
}

function socketInodes(pid: number | 'self'): Set<string> {
  const dir = `/proc/${pid}/fd`;
  const inodes = new Set<string>();
  for (const fd of readdirSync(dir)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${dir}/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed between listing and reading: not a socket to report
    }
  }
  return inodes;
}

function readTable(pid: number | 'self', table: string): Array<TcpSocket & { inode: string }> {
  const rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1);
  return rows
    .filter((row) => row.trim())
    .map((row) => {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const field = row.trim().split(/\s+/);
      return { localPort: portOf(field[1]), remotePort: portOf(field[2]), state: field[3], inode: field[9] };
    });
}

const portOf = (address: string): number => parseInt(address.split(':')[1], 16);
