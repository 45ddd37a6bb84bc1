import { execFile, spawnSync } from 'node:child_process';

type Outcome = { stdout?: string; stderr?: string; status: number | null; error?: Error };

/** spawnSync's outcome, without blocking the event loop. */
function spawnAsync(command: string, args: string[], options: { encoding: 'utf8'; timeout: number }): Promise<Outcome> {
  return new Promise((resolve) =>
    execFile(command, args, options, (error, stdout, stderr) =>
      resolve({
        stdout,
        stderr,
        status: error ? ((error as { code?: number }).code ?? 1) : 0,
        error: error && !stdout ? error : undefined,
      }),
    ),
  );
}

/**
 * Expires a live session on purpose: the server is asked to close it from a second
 * connection that attaches with the same session id and password. The original client
 * finds out on its next contact (the attach already cut its connection, so at once).
 *
 * Why it is done this way: attaching cuts the victim's connection, and node-zookeeper-client
 * reconnects within a millisecond. Racing it from the same event loop fails about half the
 * time (measured 17/30): the victim either takes its session back before the close arrives
 * (session survives), or re-attaches while the close is in flight and is left "connected"
 * on a connection of a dead session that the server never answers again (a zombie: no
 * event, no reply, forever). So the attach and the close are sent in one write by a child
 * process run with `spawnSync`, which blocks this process's event loop until the server has
 * acted: a victim living in this process cannot reconnect before its session is gone, and
 * then learns of the expiry on its very first reconnect. A second attach confirms that the
 * server calls the session expired (and repeats the close if not, e.g. when a victim in
 * another process won the race).
 */
export async function expireSession(
  connectionString: string,
  credentials: { sessionId: Buffer; sessionPassword: Buffer },
  timeoutMs = 10_000,
  options: { blockEventLoop?: boolean } = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  const servers = connectionString.split('/')[0].split(',');
  // Blocking is what keeps a victim in this process from reconnecting; but when this
  // process also carries the servers' own traffic (PartitionableEnsemble's peer proxies),
  // a blocked loop would keep the close from ever being committed: pass blockEventLoop:
  // false then (the victims must be in other processes, cut off by the caller).
  const run = (
    command: string,
    args: string[],
    opts: { encoding: 'utf8'; timeout: number },
  ): Promise<Outcome> | Outcome =>
    options.blockEventLoop === false ? spawnAsync(command, args, opts) : spawnSync(command, args, opts);
  for (let attempt = 1; ; attempt++) {
    const child = await run(
      process.execPath,
      [
        '-e',
        ATTACH_AND_CLOSE,
        servers.join(','),
        credentials.sessionId.toString('hex'),
        credentials.sessionPassword.toString('hex'),
      ],
      { encoding: 'utf8', timeout: Math.max(until - Date.now(), 1000) },
    );
    const outcome = child.stdout?.trim();
    if (outcome === 'expired') return;
    if (outcome !== 'closed') {
      throw new Error(
        `could not expire the session: ${child.error?.message ?? (child.stderr?.trim() || `exit ${child.status}`)}`,
      );
    }
    if (Date.now() > until) throw new Error(`session still alive after ${attempt} attempts to expire it`);
  }
}

/**
 * Plain Node script (argv: servers, session id hex, password hex). Connects to the first
 * server that accepts, sends a ConnectRequest for the session followed at once by a
 * closeSession request, and prints `expired` when the server answers that the session
 * does not exist, or `closed` when it attached (the close then ends the session; the
 * server may drop its connect reply when it closes the connection).
 */
const ATTACH_AND_CLOSE = String.raw`
const net = require('node:net');
const [servers, sessionIdHex, passwordHex] = process.argv.slice(1);
const sessionId = Buffer.from(sessionIdHex, 'hex');
const password = Buffer.from(passwordHex, 'hex');
const frame = (body) => { const b = Buffer.alloc(4 + body.length); b.writeInt32BE(body.length, 0); body.copy(b, 4); return b; };
// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly.
const connect = Buffer.alloc(4 + 8 + 4 + 8 + 4 + password.length + 1);
connect.writeInt32BE(4000, 12);
sessionId.copy(connect, 16);
connect.writeInt32BE(password.length, 24);
password.copy(connect, 28);
// RequestHeader: xid, type (closeSession = -11).
const close = Buffer.alloc(8);
close.writeInt32BE(1, 0);
close.writeInt32BE(-11, 4);
const hosts = servers.split(',');
function attempt(i) {
  if (i >= hosts.length) { console.error('no server accepted a connection: ' + servers); process.exit(2); }
  const [host, port] = hosts[i].split(':');
  const socket = net.connect({ host, port: Number(port) });
  let reply = Buffer.alloc(0);
  let connected = false;
  let timedOut = false;
  socket.setTimeout(5000, () => { timedOut = true; socket.destroy(); });
  socket.on('connect', () => { connected = true; socket.write(Buffer.concat([frame(connect), frame(close)])); });
  socket.on('data', (chunk) => { reply = Buffer.concat([reply, chunk]); });
  // A reset after the server's answer is normal (it closes with the close request unread).
  socket.on('error', () => { if (!connected) attempt(i + 1); });
  socket.on('close', () => {
    if (!connected) return;
    if (timedOut) { console.error('no answer from ' + hosts[i]); process.exit(3); }
    // ConnectResponse: length, protocolVersion, timeOut (0 when the session is unknown), ...
    console.log(reply.length >= 12 && reply.readInt32BE(8) <= 0 ? 'expired' : 'closed');
  });
}
attempt(0);
`;
