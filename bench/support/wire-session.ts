import { connect, type Socket } from 'node:net';

/** Callback of a wire request: the error, or null and the reply's payload. */
type Reply = (error: Error | null, payload: Buffer) => void;

const OP = { create: 1, delete: 2, getChildren2: 12, ping: 11, closeSession: -11 } as const;
const PING_XID = -2;
const EPHEMERAL_SEQUENTIAL = 3;
/** ZooKeeper's ACL `world:anyone` with every permission, as a jute vector of one. */
const OPEN_ACL = Buffer.concat([int(1), int(31), str('world'), str('anyone')]);

/**
 * A ZooKeeper session spoken by hand: every frame encoded here and written on a bare
 * socket, no client library between the loop and the kernel. It knows scenario 1's three
 * requests, the ping and closeSession, nothing more: no watches, no reconnect, no chroot,
 * and any error ends the loop. Its figure is about the ceiling for any Node client
 * sending ours' requests (read behind the create), however lean its transport: the wire
 * floor.
 */
export class WireSession {
  private readonly pending = new Map<number, Reply>();
  private xid = 1;
  private unread: Buffer = Buffer.alloc(0);
  private pingTimer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  /** The session's id, as the server gave it. */
  sessionId = 0n;

  private constructor(private readonly socket: Socket) {}

  /** A new session on the first server of `connectionString` (`host:port,...`). */
  static connect(connectionString: string, sessionTimeoutMs = 10_000): Promise<WireSession> {
    const [host, port] = connectionString.split(',')[0].split('/')[0].split(':');
    const socket = connect({ host, port: Number(port), noDelay: true });
    const session = new WireSession(socket);
    return new Promise((resolve, reject) => {
      const fail = (error: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(`wire session: no session with ${connectionString}: ${error.message}`));
      };
      const closed = (): void => fail(new Error('the socket closed first'));
      const timer = setTimeout(() => fail(new Error('no answer within 15 s')), 15_000);
      socket.once('error', fail);
      socket.once('close', closed);
      // ConnectRequest: protocol 0, last zxid 0, timeout, session 0, 16-byte empty password, not read-only.
      const request = Buffer.concat([
        int(0),
        long0(),
        int(sessionTimeoutMs),
        long0(),
        int(16),
        Buffer.alloc(16),
        byte(0),
      ]);
      socket.write(frame(request));
      session.awaitHandshake((timeoutMs, sessionId) => {
        session.sessionId = sessionId;
        clearTimeout(timer);
        socket.off('error', fail);
        socket.off('close', closed);
        socket.on('error', (error) => session.fail(error));
        socket.on('close', () => session.fail(new Error('wire session: the server closed the socket')));
        session.pingTimer = setInterval(() => session.ping(), Math.max(100, timeoutMs / 3));
        resolve(session);
      }, fail);
    });
  }

  /**
   * One uncontended lock cycle under `dir` (which must exist), ours' requests: the create
   * and the children read in one write, then, if the node is the lowest lock node, its
   * delete. `done` once the delete's reply is in.
   */
  cycle(dir: string, prefix: string, done: (error: Error | null) => void): void {
    let created: string | undefined;
    let children: string[] | undefined;
    const both = (): void => {
      if (created === undefined || children === undefined) return;
      const own = created.slice(dir.length + 1);
      const lower = children.find((child) => child.includes('__lock__') && sequence(child) < sequence(own));
      if (lower) return done(new Error(`wire session: ${own} is not the lowest under ${dir} (${lower})`));
      this.send(OP.delete, Buffer.concat([str(created), int(-1)]), (error) => done(error));
    };
    const createRequest = this.frameOf(
      OP.create,
      Buffer.concat([str(`${dir}/${prefix}`), int(0), OPEN_ACL, int(EPHEMERAL_SEQUENTIAL)]),
      (error, payload) => {
        if (error) return done(error);
        created = readString(payload, 0).value;
        both();
      },
    );
    const childrenRequest = this.frameOf(OP.getChildren2, Buffer.concat([str(dir), byte(0)]), (error, payload) => {
      if (error) return done(error);
      children = readStrings(payload);
      both();
    });
    this.socket.write(Buffer.concat([createRequest, childrenRequest]));
  }

  /** Ends the session (closeSession, answered) and closes the socket. */
  close(): Promise<void> {
    clearInterval(this.pingTimer);
    if (this.failure) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.send(OP.closeSession, Buffer.alloc(0), () => this.socket.end());
    });
  }

  private send(op: number, payload: Buffer, reply: Reply): void {
    this.socket.write(this.frameOf(op, payload, reply));
  }

  private frameOf(op: number, payload: Buffer, reply: Reply): Buffer {
    const xid = this.xid++;
    if (this.failure) {
      const failure = this.failure;
      queueMicrotask(() => reply(failure, Buffer.alloc(0)));
    } else this.pending.set(xid, reply);
    return frame(Buffer.concat([int(xid), int(op), payload]));
  }

  private ping(): void {
    this.socket.write(frame(Buffer.concat([int(PING_XID), int(OP.ping)])));
  }

  /** The ConnectResponse (its negotiated timeout), then every reply frame to `onReply`. */
  private awaitHandshake(
    connected: (timeoutMs: number, sessionId: bigint) => void,
    fail: (error: Error) => void,
  ): void {
    let handshaking = true;
    this.socket.on('data', (data: Buffer) => {
      this.unread = this.unread.length ? Buffer.concat([this.unread, data]) : data;
      for (let body = this.nextFrame(); body; body = this.nextFrame()) {
        if (!handshaking) this.onReply(body);
        else if (body.length < 20 || body.readInt32BE(4) <= 0) fail(new Error('the server refused the session'));
        else {
          handshaking = false;
          connected(body.readInt32BE(4), body.readBigInt64BE(8));
        }
      }
    });
  }

  private nextFrame(): Buffer | undefined {
    if (this.unread.length < 4) return undefined;
    const length = this.unread.readInt32BE(0);
    if (this.unread.length < 4 + length) return undefined;
    const body = this.unread.subarray(4, 4 + length);
    this.unread = this.unread.subarray(4 + length);
    return body;
  }

  /** ReplyHeader: xid, zxid, err; then the payload. Pings (xid -2) are only acknowledged. */
  private onReply(body: Buffer): void {
    const xid = body.readInt32BE(0);
    if (xid === PING_XID) return;
    const reply = this.pending.get(xid);
    if (!reply) return this.fail(new Error(`wire session: a reply to xid ${xid}, which nothing waits for`));
    this.pending.delete(xid);
    const code = body.readInt32BE(12);
    reply(code === 0 ? null : new Error(`wire session: ZooKeeper error ${code} for xid ${xid}`), body.subarray(16));
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    clearInterval(this.pingTimer);
    for (const reply of this.pending.values()) reply(error, Buffer.alloc(0));
    this.pending.clear();
    this.socket.destroy();
  }
}

/** The 10-digit sequence number ZooKeeper appends to a sequential node's name. */
function sequence(name: string): number {
  return Number(name.slice(-10));
}

function frame(body: Buffer): Buffer {
  return Buffer.concat([int(body.length), body]);
}

function int(value: number): Buffer {
  const buffer = Buffer.allocUnsafe(4);
  buffer.writeInt32BE(value, 0);
  return buffer;
}

function long0(): Buffer {
  return Buffer.alloc(8);
}

function byte(value: number): Buffer {
  return Buffer.from([value]);
}

function str(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([int(bytes.length), bytes]);
}

function readString(buffer: Buffer, offset: number): { value: string; next: number } {
  const length = buffer.readInt32BE(offset);
  return { value: buffer.toString('utf8', offset + 4, offset + 4 + length), next: offset + 4 + length };
}

/** A jute vector of strings at the start of `buffer`. */
function readStrings(buffer: Buffer): string[] {
  const count = buffer.readInt32BE(0);
  const values: string[] = [];
  for (let i = 0, offset = 4; i < count; i++) {
    const { value, next } = readString(buffer, offset);
    values.push(value);
    offset = next;
  }
  return values;
}
