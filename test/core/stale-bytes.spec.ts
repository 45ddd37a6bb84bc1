import { createServer, type Server, type Socket } from 'node:net';

import { ZkLockBackend } from '../../lib/index';
import { waitUntil } from '../support/wait-until';

/**
 * node-zookeeper-client 1.1.3 carries bytes left over from one connection into the next
 * one's first reply. A server (a fake one here; a black-holed connection healed, in the
 * chaos test that found it) answers a request with an out-of-order xid and, in the same
 * chunk, a ping reply: the client drops the socket at the first frame, and without the
 * fix the 16 bytes left over were read as the next connection's connect reply, throwing a
 * RangeError out of the client's socket handler, which ends the process.
 */
describe('bytes left over from a dropped connection', () => {
  const frame = (...fields: Array<[number, 'i32' | 'i64']>): Buffer => {
    const body = Buffer.alloc(fields.reduce((n, [, t]) => n + (t === 'i32' ? 4 : 8), 0));
    let at = 0;
    for (const [value, type] of fields)
      at = type === 'i32' ? body.writeInt32BE(value, at) : body.writeBigInt64BE(BigInt(value), at);
    const size = Buffer.alloc(4);
    size.writeInt32BE(body.length);
    return Buffer.concat([size, body]);
  };
  /** protocolVersion, timeOut, sessionId, then a 16-byte password, in one frame. */
  const connectReply = (): Buffer => {
    const reply = Buffer.concat([frame([0, 'i32'], [4000, 'i32'], [0x1234, 'i64'], [16, 'i32']), Buffer.alloc(16)]);
    reply.writeInt32BE(reply.length - 4, 0); // the frame's size counts the password too
    return reply;
  };
  const replyHeader = (xid: number): Buffer => frame([xid, 'i32'], [1, 'i64'], [0, 'i32']);

  let server: Server;
  const sockets: Socket[] = [];
  let connections = 0;
  afterEach(() => {
    for (const socket of sockets) socket.destroy();
    server?.close();
  });

  it('are dropped when the next connection starts: the client reconnects instead of crashing', async () => {
    server = createServer((socket) => {
      sockets.push(socket);
      const n = ++connections;
      let answered = false;
      socket.on('error', () => undefined);
      socket.on('data', () => {
        if (!answered) {
          answered = true;
          socket.write(connectReply());
          return;
        }
        // The first request after the first connect: a wrong xid and a ping reply, one chunk.
        if (n === 1) socket.write(Buffer.concat([replyHeader(999), replyHeader(-2)]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const backend = await ZkLockBackend.connect({
      connectionString: `127.0.0.1:${port}`,
      sessionTimeoutMs: 4000,
      connectTimeoutMs: 3000,
    });
    try {
      // The heartbeat is the first request; its bad answer drops the connection, and the
      // client connects again to a reply it reads correctly.
      await waitUntil(
        () => connections >= 2 && backend.client.session.isConnected,
        'the client is connected again after the dropped connection',
      );
    } finally {
      await backend.close();
    }
  });
});
