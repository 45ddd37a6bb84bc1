import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { FaultProxy } from '../../bench/peers/faults/fault-proxy';

/** A server that answers each chunk with its name and the chunk, and counts its connections. */
class NamedEcho {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  accepted = 0;
  port = 0;

  constructor(private readonly name: string) {
    this.server = createServer((socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('data', (chunk) => socket.write(`${this.name}:${chunk.toString()}`));
    });
  }

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A client whose received text accumulates, and which notes its connection closing. */
async function client(endpoint: string): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const [host, port] = endpoint.split(':');
  const socket = connect(Number(port), host);
  let text = '';
  let closed = false;
  socket.on('data', (chunk) => (text += chunk.toString()));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => text, closed: () => closed };
}

async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (test()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the fault trials proxy (FaultProxy)', () => {
  const one = new NamedEcho('one');
  const two = new NamedEcho('two');
  let proxy: FaultProxy;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    await Promise.all([one.start(), two.start()]);
  });
  beforeEach(async () => {
    proxy = new FaultProxy(one.endpoint);
    await proxy.start();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await proxy.stop();
  });
  afterAll(async () => {
    await Promise.all([one.stop(), two.stop()]);
  });

  it('forwards both ways, whatever the bytes', async () => {
    const c = await client(proxy.endpoint);
    sockets.push(c.socket);
    c.socket.write('*1\r\n$4\r\nPING\r\n');
    await until(() => c.received() === 'one:*1\r\n$4\r\nPING\r\n', 'the echo');
  });

  it('a blackhole holds everything, silently, and heal delivers it in order', async () => {
    const c = await client(proxy.endpoint);
    sockets.push(c.socket);
    c.socket.write('a');
    await until(() => c.received() === 'one:a', 'the first echo');
    proxy.blackhole();
    c.socket.write('b');
    await sleep(100);
    expect(c.received()).toBe('one:a');
    expect(c.closed()).toBe(false);
    proxy.heal();
    await until(() => c.received() === 'one:aone:b', 'the held bytes');
  });

  it('a connection opened in a blackhole reaches the server only at heal', async () => {
    proxy.blackhole();
    const before = one.accepted;
    const c = await client(proxy.endpoint);
    sockets.push(c.socket);
    c.socket.write('x');
    await sleep(100);
    expect(one.accepted).toBe(before);
    proxy.heal();
    await until(() => c.received() === 'one:x', 'the echo after heal');
  });

  it('retarget drops every connection; new ones reach the new target', async () => {
    const c = await client(proxy.endpoint);
    sockets.push(c.socket);
    c.socket.write('a');
    await until(() => c.received() === 'one:a', 'the echo');
    proxy.retarget(two.endpoint);
    await until(() => c.closed(), 'the old connection dropped');
    const d = await client(proxy.endpoint);
    sockets.push(d.socket);
    d.socket.write('b');
    await until(() => d.received() === 'two:b', 'the new target');
  });
});
