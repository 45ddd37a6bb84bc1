import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

import { DelayProxy } from '../../bench/support/delay-proxy';
import { waitFor as poll } from '../support/wait-for';

const ONE_WAY_MS = 30;
const ms = (from: bigint, to: bigint): number => Number(to - from) / 1e6;
const waitFor = <T>(read: () => T | undefined): Promise<NonNullable<T>> => poll(read, { intervalMs: 2 });

/**
 * The latency pass's delay proxy, in its own process, in front of a loopback server this
 * test runs: each direction held at least the one-way delay (a lower bound holds on a
 * loaded machine; an upper one would not), bytes in order, an end passed on behind the data.
 */
describe('delay proxy', () => {
  let server: Server;
  let proxy: DelayProxy;
  /** The server side of each connection, in order, and when each of its chunks arrived. */
  const accepted: Array<{ socket: Socket; arrivals: Array<{ at: bigint; text: string }> }> = [];

  beforeAll(async () => {
    server = createServer({ allowHalfOpen: true }, (socket) => {
      const entry = { socket, arrivals: [] as Array<{ at: bigint; text: string }> };
      accepted.push(entry);
      socket.on('data', (chunk: Buffer) => entry.arrivals.push({ at: process.hrtime.bigint(), text: String(chunk) }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy = await DelayProxy.start(`127.0.0.1:${(server.address() as AddressInfo).port}`, ONE_WAY_MS);
  });

  afterAll(async () => {
    await proxy?.stop();
    for (const { socket } of accepted) socket.destroy();
    server?.close();
  });

  const open = async (): Promise<{ client: Socket; far: (typeof accepted)[number] }> => {
    const before = accepted.length;
    const client = connect(proxy.port, '127.0.0.1');
    await once(client, 'connect');
    const far = await waitFor(() => accepted[before]);
    return { client, far };
  };

  it('holds each direction for the delay, and keeps the bytes in order', async () => {
    const { client, far } = await open();
    const received: Array<{ at: bigint; text: string }> = [];
    client.on('data', (chunk: Buffer) => received.push({ at: process.hrtime.bigint(), text: String(chunk) }));

    const sentAt = process.hrtime.bigint();
    client.write('ping');
    const arrival = await waitFor(() => far.arrivals[0]);
    expect(arrival.text).toBe('ping');
    expect(ms(sentAt, arrival.at)).toBeGreaterThanOrEqual(ONE_WAY_MS);

    const repliedAt = process.hrtime.bigint();
    far.socket.write('pong');
    const reply = await waitFor(() => received[0]);
    expect(reply.text).toBe('pong');
    expect(ms(repliedAt, reply.at)).toBeGreaterThanOrEqual(ONE_WAY_MS);

    // Many chunks, written a moment apart: they come out whole and in order.
    const words = Array.from({ length: 50 }, (_, i) => `<${i}>`);
    for (const word of words) {
      client.write(word);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const expected = words.join('');
    await waitFor(() => far.arrivals.map((a) => a.text).join('').length >= 'ping'.length + expected.length);
    expect(
      far.arrivals
        .slice(1)
        .map((a) => a.text)
        .join(''),
    ).toBe(expected);
    client.destroy();
  });

  it('passes an end on behind the data still held, each way, and reports what it held', async () => {
    const { client, far } = await open();
    const farEnded = once(far.socket, 'end');
    client.write('last words');
    client.end();
    await farEnded;
    // The end came after the data, not ahead of it.
    expect(far.arrivals.map((a) => a.text).join('')).toBe('last words');

    let fromServer = '';
    client.on('data', (chunk: Buffer) => (fromServer += String(chunk)));
    const clientEnded = once(client, 'end');
    far.socket.end('bye');
    await clientEnded;
    expect(fromServer).toBe('bye');

    const stats = await proxy.stats();
    expect(stats.oneWayMs).toBe(ONE_WAY_MS);
    expect(stats.connections).toBe(2);
    for (const lane of [stats.toServer, stats.toClient]) {
      expect(lane.chunks).toBeGreaterThan(0);
      expect(lane.p50Us).toBeGreaterThanOrEqual(ONE_WAY_MS * 1000);
    }
  });

  it('closes the client when the server resets its side', async () => {
    const { client, far } = await open();
    const closed = once(client, 'close');
    far.socket.resetAndDestroy();
    await closed;
    expect(client.destroyed).toBe(true);
  });
});
