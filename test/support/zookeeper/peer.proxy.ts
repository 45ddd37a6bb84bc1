import { createServer, type Server, type Socket } from 'node:net';

import { ElectionGreetingRewriter, type ElectionGreeting } from './election-greeting.rewriter';
import { PeerLink } from './peer.link';

/** What went through one proxy: only bytes handed on count, not bytes held in a partition. */
export interface ProxyTraffic {
  bytesToTarget: number;
  bytesToSource: number;
  /** Connections the proxy opened to its target. */
  targetConnections: number;
}

export interface PeerProxyOptions {
  targetPort: number;
  /**
   * For an election port: the `host:port` the target must call the source back on, read
   * when a connection starts (see ElectionGreetingRewriter). Absent for a quorum port.
   */
  callback?: () => string;
}

/**
 * A loopback TCP proxy in front of one port (quorum or election) of one ZooKeeper server,
 * used by exactly one other server to reach it. `cut` partitions it silently: connections
 * stay open and new ones are accepted, but nothing moves until `heal`.
 */
export class PeerProxy {
  port = 0;
  readonly traffic: ProxyTraffic = { bytesToTarget: 0, bytesToSource: 0, targetConnections: 0 };
  readonly greetings: ElectionGreeting[] = [];
  private readonly links = new Set<PeerLink>();
  private server: Server | undefined;
  private isCut = false;
  /** Delay of every byte to the target, e.g. a follower's requests and acks to its leader. */
  delayToTargetMs = 0;
  /** Where connections accepted from now on lead. */
  targetPort: number;

  constructor(private readonly options: PeerProxyOptions) {
    this.targetPort = options.targetPort;
  }

  get cut(): boolean {
    return this.isCut;
  }

  async start(): Promise<void> {
    // pauseOnConnect: a connection accepted during a partition must not even be read.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    this.port = (server.address() as { port: number }).port;
  }

  partition(): void {
    this.isCut = true;
    for (const link of this.links) link.hold();
  }

  heal(): void {
    this.isCut = false;
    for (const link of this.links) link.release();
  }

  async stop(): Promise<void> {
    for (const link of this.links) link.destroy();
    this.links.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(source: Socket): void {
    const link = new PeerLink(source, {
      targetPort: this.targetPort,
      outbound: this.rewriter(),
      delivered: (direction, bytes) => {
        if (direction === 'toTarget') this.traffic.bytesToTarget += bytes;
        else this.traffic.bytesToSource += bytes;
      },
      delayToTargetMs: () => this.delayToTargetMs,
      connected: () => this.traffic.targetConnections++,
      closed: (closed) => this.links.delete(closed),
    });
    this.links.add(link);
    if (!this.isCut) link.release();
  }

  private rewriter(): ElectionGreetingRewriter | undefined {
    const callback = this.options.callback;
    return callback && new ElectionGreetingRewriter(callback(), (greeting) => this.greetings.push(greeting));
  }
}
