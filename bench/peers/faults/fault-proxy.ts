/**
 * A loopback TCP proxy for the fault trials, blind to the protocol it carries (Redis's RESP
 * or ZooKeeper's frames alike; test/support's `TcpProxy` parses ZooKeeper frames, so RESP
 * would stall in it), with two faults:
 *
 * - `blackhole()` … `heal()`: a network partition. Nothing crosses in either direction and
 *   nobody is told (no FIN, no RST): bytes, and a side's closing, are held, in order, and
 *   delivered at `heal()`, as TCP would retransmit them once the network is back. A
 *   connection opened meanwhile is accepted but reaches the server only at `heal()`.
 * - `retarget(endpoint)`: every connection is dropped and new ones go to `endpoint`, as a
 *   Sentinel-aware client reconnects to the replica promoted in place of a dead primary.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** One client connection and its way to the server; null in a queue is the sender's closing. */
interface Link {
  readonly client: Socket;
  server: Socket | undefined;
  readonly toServer: Array<Buffer | null>;
  readonly toClient: Array<Buffer | null>;
}

/** `host:port` as its two parts. */
function parseEndpoint(endpoint: string): { host: string; port: number } {
  const match = /^(.+):(\d+)$/.exec(endpoint);
  if (!match) throw new Error(`A proxy's target must be "host:port", got "${endpoint}".`);
  return { host: match[1], port: Number(match[2]) };
}

/** See the file's comment. */
export class FaultProxy {
  private readonly links = new Set<Link>();
  private server: Server | undefined;
  private target: { host: string; port: number };
  private holes = false;
  private portNumber = 0;

  constructor(target: string) {
    this.target = parseEndpoint(target);
  }

  /** `127.0.0.1:<port>`: what clients connect to instead of the server. */
  get endpoint(): string {
    return `127.0.0.1:${this.portNumber}`;
  }

  /** Connections open now. */
  get connections(): number {
    return this.links.size;
  }

  /** Listens on a free loopback port. */
  async start(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    this.portNumber = (server.address() as { port: number }).port;
  }

  /** From now on nothing crosses, and nobody hears of it (see the file's comment). */
  blackhole(): void {
    this.holes = true;
  }

  /** Delivers what was held, in order, and forwards again. */
  heal(): void {
    this.holes = false;
    for (const link of [...this.links]) {
      if (!link.server) this.open(link);
      this.flush(link);
    }
  }

  /** Drops every connection; new ones go to `target` (`host:port`). */
  retarget(target: string): void {
    this.target = parseEndpoint(target);
    for (const link of [...this.links]) this.close(link);
  }

  /** Stops listening and drops every connection. */
  async stop(): Promise<void> {
    for (const link of [...this.links]) this.close(link);
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const link: Link = { client, server: undefined, toServer: [], toClient: [] };
    this.links.add(link);
    client.setNoDelay(true);
    client.on('data', (chunk: Buffer) => this.send(link, link.toServer, chunk));
    client.on('error', () => undefined); // 'close' follows
    client.on('close', () => this.send(link, link.toServer, null));
    if (!this.holes) this.open(link);
  }

  private open(link: Link): void {
    const server = connect(this.target);
    link.server = server;
    server.setNoDelay(true);
    server.on('data', (chunk: Buffer) => this.send(link, link.toClient, chunk));
    server.on('error', () => undefined); // 'close' follows
    server.on('close', () => this.send(link, link.toClient, null));
    this.flush(link);
  }

  /** Queues `chunk` (null: the sender closed) on `queue`, and delivers it unless the network is down. */
  private send(link: Link, queue: Array<Buffer | null>, chunk: Buffer | null): void {
    if (!this.links.has(link)) return;
    queue.push(chunk);
    if (!this.holes) this.flush(link);
  }

  private flush(link: Link): void {
    if (link.server) this.deliver(link, link.toServer, link.server);
    this.deliver(link, link.toClient, link.client);
  }

  private deliver(link: Link, queue: Array<Buffer | null>, to: Socket): void {
    while (queue.length > 0 && this.links.has(link)) {
      const chunk = queue.shift()!;
      if (chunk === null) this.close(link);
      else if (!to.destroyed) to.write(chunk);
    }
  }

  private close(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.destroy();
    link.server?.destroy();
  }
}
