import { createServer, connect, type Server, type Socket } from 'node:net';

/** ZooKeeper request op codes, as they appear in a request header. */
export const ZK_OP = {
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getChildren2: 12,
  multi: 14,
  multiRead: 22,
  ping: 11,
  setWatches: 101,
  closeSession: -11,
} as const;

interface Link {
  client: Socket;
  server: Socket;
  /** Bytes from the client not yet framed into requests. */
  pending: Buffer;
  sawConnectRequest: boolean;
  /** Bytes from the server kept back while `holdReplies()` is on, in arrival order. */
  held: Buffer[];
  /** A four-letter word's connection (`srvr`, as the library asks a server's version): passed on as is. */
  fourLetter?: boolean;
}

/** A request as it reached the proxy: its op code, and its path for ops that carry one first. */
export interface ProxiedRequest {
  readonly op: number;
  readonly path?: string;
}

/** Op codes whose request body starts with a path (create, delete, exists, getData, setData, getACL, setACL, getChildren, sync, getChildren2, check, create2, createContainer, createTTL). */
const OPS_WITH_PATH = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 19, 21]);

/**
 * A loopback TCP proxy between clients and one ZooKeeper server, to make faults on demand:
 * `drop()` closes every connection (a connection loss; the session lives on),
 * `blackhole()` silently stops forwarding in both directions (a partition with no FIN or
 * RST), `cutBefore(op)` cuts the connection instead of forwarding the next request of
 * that op, and `cutAfter(op)` forwards the next request of that op to the server, then cuts
 * the connection before its reply can come back. `holdReplies()` keeps everything the
 * server sends back (the connection stays up) until `releaseReplies()` delivers it, in
 * order; `requests` logs every request the clients send, in the order it reaches the proxy.
 */
export class TcpProxy {
  private readonly links = new Set<Link>();
  private server: Server | undefined;
  private holes = false;
  /** The op codes of the request to cut (the first of any of them). */
  private cutOps: readonly number[] | undefined;
  /** When set, only a request of `cutOps` on this path is cut (a heartbeat is a delete too). */
  private cutPath: string | undefined;
  private cutWhen: 'before' | 'after' | 'sent' = 'after';
  private cutDelayMs = 0;
  private onCut: (() => void) | undefined;
  private holding = false;
  /**
   * Every request received from a client (not the connect request, and not what
   * `blackhole()` swallows), in arrival order, including one that `cutBefore()` drops.
   */
  readonly requests: ProxiedRequest[] = [];
  port = 0;
  /** When set, a four-letter word is answered with this (as a server of another version would), not passed on. */
  fourLetterReply: string | undefined;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get connectionCount(): number {
    return this.links.size;
  }

  async start(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
  }

  drop(): void {
    for (const link of [...this.links]) this.close(link);
  }

  blackhole(): void {
    this.holes = true;
  }

  heal(): void {
    this.holes = false;
  }

  /**
   * Stops delivering the server's replies (and notifications) to clients: they are kept,
   * in order, while requests still flow to the server. The connection stays up.
   */
  holdReplies(): void {
    this.holding = true;
  }

  /** Delivers every reply kept since `holdReplies()`, in order, and forwards again. */
  releaseReplies(): void {
    this.holding = false;
    for (const link of this.links) {
      const held = link.held;
      link.held = [];
      for (const chunk of held) link.client.write(chunk);
    }
  }

  /** Bytes from the server kept back by `holdReplies()` and not yet delivered. */
  get heldReplyBytes(): number {
    let bytes = 0;
    for (const link of this.links) for (const chunk of link.held) bytes += chunk.length;
    return bytes;
  }

  /** Resolves when the next request with op code `op` (or any of several) has been served and the link cut. */
  cutAfter(op: number | readonly number[]): Promise<void> {
    return this.cut(op, 'after');
  }

  /**
   * Resolves when the next request with op code `op` has been handed on to the server and
   * the link closed `afterMs` later (long enough for the server to pass the request on:
   * ZooKeeper drops requests whose connection is already gone), whether or not it answered
   * meanwhile (its answer is not passed on): it acts on the request, the client never hears
   * of it.
   */
  cutAfterSent(op: number, afterMs = 50): Promise<void> {
    this.cutDelayMs = afterMs;
    return this.cut(op, 'sent');
  }

  /**
   * Resolves when the next request with op code `op` (on `path`, when given) has been
   * dropped, unsent, with the link.
   */
  cutBefore(op: number, path?: string): Promise<void> {
    return this.cut(op, 'before', path);
  }

  private cut(op: number | readonly number[], when: 'before' | 'after' | 'sent', path?: string): Promise<void> {
    this.cutOps = typeof op === 'number' ? [op] : op;
    this.cutPath = path;
    this.cutWhen = when;
    return new Promise((resolve) => (this.onCut = resolve));
  }

  async stop(): Promise<void> {
    this.drop();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const server = connect({ host: this.targetHost, port: this.targetPort });
    const link: Link = { client, server, pending: Buffer.alloc(0), sawConnectRequest: false, held: [] };
    this.links.add(link);
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on('data', (chunk) => this.fromClient(link, chunk));
    server.on('data', (chunk) => {
      if (this.holes) return;
      if (this.holding) link.held.push(chunk);
      else client.write(chunk);
    });
    for (const socket of [client, server]) {
      socket.on('error', () => this.close(link));
      socket.on('close', () => this.close(link));
    }
  }

  private fromClient(link: Link, chunk: Buffer): void {
    if (this.holes) return;
    if (!link.sawConnectRequest && link.pending.length === 0 && /^[a-z]{4}$/.test(chunk.toString('latin1', 0, 4)))
      link.fourLetter = true;
    if (link.fourLetter && this.fourLetterReply !== undefined) return void link.client.end(this.fourLetterReply);
    if (link.fourLetter) return void link.server.write(chunk);
    link.pending = Buffer.concat([link.pending, chunk]);
    while (link.pending.length >= 4) {
      const size = link.pending.readInt32BE(0);
      if (link.pending.length < 4 + size) return;
      const frame = link.pending.subarray(0, 4 + size);
      link.pending = link.pending.subarray(4 + size);
      const op = link.sawConnectRequest && size >= 8 ? frame.readInt32BE(8) : undefined;
      link.sawConnectRequest = true;
      const request = op === undefined ? undefined : requestOf(op, frame);
      if (request) this.requests.push(request);
      const cutting =
        request !== undefined &&
        this.cutOps?.includes(request.op) === true &&
        (this.cutPath ?? request.path) === request.path;
      if (cutting && this.cutWhen === 'before') {
        this.cutOps = undefined;
        this.close(link); // the request never reaches the server
        this.onCut?.();
        return;
      }
      link.server.write(frame);
      if (cutting && this.cutWhen === 'sent') {
        this.cutOps = undefined;
        link.client.pause();
        link.server.removeAllListeners('data');
        setTimeout(() => {
          this.close(link);
          this.onCut?.();
        }, this.cutDelayMs);
        return;
      }
      if (cutting) {
        this.cutOps = undefined;
        // The request reaches the server; once the server answers (so it has acted on it),
        // the connection is cut and the answer never reaches the client.
        link.client.pause();
        link.server.removeAllListeners('data');
        link.server.once('data', () => {
          this.close(link);
          this.onCut?.();
        });
        return;
      }
    }
  }

  private close(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.destroy();
    link.server.destroy();
  }
}

/** The op and, when the op's body starts with one, the path of a request frame. */
function requestOf(op: number, frame: Buffer): ProxiedRequest {
  // Frame: length (4), xid (4), op (4), then the body; a path is a length (4) and UTF-8 bytes.
  if (!OPS_WITH_PATH.has(op) || frame.length < 16) return { op };
  const length = frame.readInt32BE(12);
  if (length < 0 || 16 + length > frame.length) return { op };
  return { op, path: frame.toString('utf8', 16, 16 + length) };
}
