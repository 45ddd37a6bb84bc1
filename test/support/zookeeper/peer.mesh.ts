import { PeerProxy } from './peer.proxy';

/** The two ports a ZooKeeper server listens on for its peers. */
export interface PeerPorts {
  quorumPort: number;
  electionPort: number;
}

/** Peer traffic of one server, summed over every proxy on its way in or out. */
export interface PeerTraffic {
  bytesIn: number;
  bytesOut: number;
  /** Connections opened to its quorum or election port. */
  connectionsIn: number;
  /**
   * Election greetings it got from lower ids, each of which makes it call the sender back:
   * their announced address was swapped for the proxy's.
   */
  callbacksRedirected: number;
}

/** The proxies server `from` uses to reach server `to` (indices, not ZooKeeper ids). */
interface Route {
  from: number;
  to: number;
  quorum: PeerProxy;
  election: PeerProxy;
}

const host = (port: number) => `127.0.0.1:${port}`;

/**
 * A proxy for every ordered pair of servers and each of the two peer ports: server i
 * reaches server j only through route (i, j). Election greetings that cross route (i, j)
 * announce route (j, i) as the sender's address, so that the call back which ZooKeeper
 * makes from the higher id to the lower one takes the proxies too.
 */
export class PeerMesh {
  private readonly routes: Route[] = [];
  /** An observer's way to its observer master (a follower's `observerMasterPort`), if any. */
  private master: { from: number; to: number; proxy: PeerProxy } | undefined;

  private constructor(private readonly size: number) {}

  /**
   * Starts the proxies for servers listening on `ports` (one entry per server), and with
   * `observer`, one more proxy that server uses for every observer master it calls: on
   * loopback they all share the observer's `observerMasterPort`, so the mesh decides which
   * follower answers (`observeThrough`).
   */
  static async start(ports: readonly PeerPorts[], observer?: number): Promise<PeerMesh> {
    const mesh = new PeerMesh(ports.length);
    if (observer !== undefined) mesh.master = { from: observer, to: -1, proxy: new PeerProxy({ targetPort: 0 }) };
    ports.forEach((_, from) =>
      ports.forEach(({ quorumPort, electionPort }, to) => {
        if (from === to) return;
        const quorum = new PeerProxy({ targetPort: quorumPort });
        // Read when a connection starts, by which time every proxy has its port.
        const callback = () => host(mesh.route(to, from).election.port);
        mesh.routes.push({ from, to, quorum, election: new PeerProxy({ targetPort: electionPort, callback }) });
      }),
    );
    try {
      await Promise.all(mesh.proxies().map((proxy) => proxy.start()));
    } catch (error) {
      await mesh.stop();
      throw error;
    }
    return mesh;
  }

  /** Server i's `server.N=` lines: its own real ports, and a proxy for every peer (`observer`: that one's index). */
  serverLines(i: number, own: PeerPorts, observer?: number): string[] {
    return Array.from({ length: this.size }, (_, j) => {
      const ports = j === i ? own : this.portsOf(this.route(i, j));
      const role = j === observer ? ':observer' : '';
      return `server.${j + 1}=${host(ports.quorumPort)}:${ports.electionPort}${role}`;
    });
  }

  /** The port the observer calls its observer masters on (the proxy's). */
  get observerMasterPort(): number | undefined {
    return this.master?.proxy.port;
  }

  /** From now on the observer's calls to an observer master reach server `to`, on `port`. */
  observeThrough(to: number, port: number): void {
    this.master!.to = to;
    this.master!.proxy.targetPort = port;
  }

  /** Delays everything server `from` sends to server `to` on their quorum connection by `ms`. */
  slow(from: number, to: number, ms: number): void {
    this.route(from, to).quorum.delayToTargetMs = ms;
  }

  /** Cuts every route that starts or ends at an isolated server, and heals the others. */
  partition(isolated: ReadonlySet<number>): void {
    const master = this.master ? [{ ...this.master, proxies: [this.master.proxy] }] : [];
    for (const route of [...this.routes.map((r) => ({ ...r, proxies: [r.quorum, r.election] })), ...master]) {
      const cut = isolated.has(route.from) || isolated.has(route.to);
      for (const proxy of route.proxies) {
        if (cut && !proxy.cut) proxy.partition();
        if (!cut && proxy.cut) proxy.heal();
      }
    }
  }

  traffic(i: number): PeerTraffic {
    const total: PeerTraffic = { bytesIn: 0, bytesOut: 0, connectionsIn: 0, callbacksRedirected: 0 };
    for (const route of this.routes) {
      for (const proxy of [route.quorum, route.election]) {
        const { bytesToTarget, bytesToSource, targetConnections } = proxy.traffic;
        if (route.to === i) {
          total.bytesIn += bytesToTarget;
          total.bytesOut += bytesToSource;
          total.connectionsIn += targetConnections;
        }
        if (route.from === i) {
          total.bytesIn += bytesToSource;
          total.bytesOut += bytesToTarget;
        }
      }
      if (route.to === i)
        total.callbacksRedirected += route.election.greetings.filter((g) => g.sid < BigInt(i + 1)).length;
    }
    return total;
  }

  /** The ports server i connects to when it calls a peer: all its routes' proxies. */
  outboundPorts(i: number): Set<number> {
    const ports = this.routes.filter((r) => r.from === i).flatMap((r) => [r.quorum.port, r.election.port]);
    if (this.master?.from === i) ports.push(this.master.proxy.port);
    return new Set(ports);
  }

  async stop(): Promise<void> {
    await Promise.all(this.proxies().map((proxy) => proxy.stop()));
  }

  private route(from: number, to: number): Route {
    return this.routes.find((r) => r.from === from && r.to === to)!;
  }

  private portsOf(route: Route): PeerPorts {
    return { quorumPort: route.quorum.port, electionPort: route.election.port };
  }

  private proxies(): PeerProxy[] {
    return [...this.routes.flatMap((r) => [r.quorum, r.election]), ...(this.master ? [this.master.proxy] : [])];
  }
}
