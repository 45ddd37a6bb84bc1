import { createServer, connect, type Server, type Socket } from 'node:net';

/** ZooKeeper's opcode for `multiRead` (3.6 and later). */
export const MULTI_READ_OP = 22;
const EXISTS_OP = 3;
const UNIMPLEMENTED = -6;

/** How the proxy answers `srvr` on a connection of its own: a reply, or nothing (the connection closes). */
export type SrvrAnswer = { readonly reply: string } | 'silence';

/**
 * A loopback proxy in front of the test server that plays an older ZooKeeper: it answers
 * the `srvr` four-letter word itself (a 3.5 version, a whitelist refusal, or nothing), and
 * with `refuseMultiRead` answers a `multiRead` as ZooKeeper 3.5 answers any request it
 * does not know (UnimplementedRequestProcessor): an UNIMPLEMENTED reply in its turn, then
 * the connection closed. To keep the replies in order, the refused request goes on to
 * the server as a harmless `exists /` with the same xid, whose reply is replaced.
 * `ops` logs the op of every request after each connect request.
 */
export class OldServerProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  readonly ops: number[] = [];
  /** `srvr` questions received. */
  srvrAsked = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly srvr: SrvrAnswer,
    private readonly refuseMultiRead = false,
  ) {}

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = (this.server = createServer((client) => this.accept(client)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  }

  private accept(client: Socket): void {
    this.track(client);
    client.once('data', (first: Buffer) => {
      if (/^[a-z]{4}$/.test(first.toString('latin1', 0, 4)))
        return this.fourLetter(client, first.toString('latin1', 0, 4));
      this.link(client, first);
    });
  }

  private fourLetter(client: Socket, command: string): void {
    if (command === 'srvr') this.srvrAsked++;
    if (this.srvr === 'silence' || command !== 'srvr') client.destroy();
    else client.end(this.srvr.reply);
  }

  private link(client: Socket, first: Buffer): void {
    const server = this.track(connect({ port: this.targetPort, host: '127.0.0.1' }));
    for (const socket of [client, server]) socket.on('close', () => (socket === client ? server : client).destroy());
    let fromClient = Buffer.alloc(0);
    let fromServer = Buffer.alloc(0);
    let connected = false;
    let refusedXid: number | undefined;
    const onClient = (chunk: Buffer): void => {
      fromClient = Buffer.concat([fromClient, chunk]);
      for (let frame; (frame = takeFrame(fromClient));) {
        fromClient = fromClient.subarray(frame.length);
        if (!connected) {
          connected = true;
          server.write(frame);
          continue;
        }
        const op = frame.readInt32BE(8);
        this.ops.push(op);
        if (op === MULTI_READ_OP && this.refuseMultiRead && refusedXid === undefined) {
          refusedXid = frame.readInt32BE(4);
          server.write(existsRoot(refusedXid));
        } else server.write(frame);
      }
    };
    client.on('data', onClient);
    onClient(first);
    server.on('data', (chunk: Buffer) => {
      if (refusedXid === undefined) return void client.write(chunk);
      fromServer = Buffer.concat([fromServer, chunk]);
      for (let frame; (frame = takeFrame(fromServer));) {
        fromServer = fromServer.subarray(frame.length);
        if (frame.length >= 8 && frame.readInt32BE(4) === refusedXid) {
          const reply = Buffer.alloc(20); // length, xid, zxid, err: no body
          reply.writeInt32BE(16, 0);
          reply.writeInt32BE(refusedXid, 4);
          frame.copy(reply, 8, 8, 16);
          reply.writeInt32BE(UNIMPLEMENTED, 16);
          client.end(reply); // then the connection closes, as 3.5's sendCloseSession does
          server.destroy();
          return;
        }
        client.write(frame);
      }
    });
  }
}

/** The first whole length-prefixed frame of `buffer`, if there is one. */
function takeFrame(buffer: Buffer): Buffer | undefined {
  if (buffer.length < 4) return undefined;
  const size = buffer.readInt32BE(0);
  return buffer.length < 4 + size ? undefined : buffer.subarray(0, 4 + size);
}

/** An `exists /` request (no watch) with `xid`. */
function existsRoot(xid: number): Buffer {
  const frame = Buffer.alloc(4 + 4 + 4 + 4 + 1 + 1);
  frame.writeInt32BE(frame.length - 4, 0);
  frame.writeInt32BE(xid, 4);
  frame.writeInt32BE(EXISTS_OP, 8);
  frame.writeInt32BE(1, 12);
  frame.write('/', 16, 'latin1');
  frame.writeUInt8(0, 17);
  return frame;
}
