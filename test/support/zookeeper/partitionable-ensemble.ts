import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { waitFor } from '../wait-for';
import { PeerMesh, type PeerPorts, type PeerTraffic } from './peer.mesh';
import { tcpConnectionsOf, tcpSocketsOf } from './tcp-sockets.inspector';
import { ZkServer } from './zk-server';

export interface PartitionableEnsembleOptions {
  tickTime?: number;
  syncLimit?: number;
  initLimit?: number;
  /**
   * A fourth server, an observer (server 4, index 3): `direct` follows the leader itself;
   * `observer-master` (ZooKeeper 3.6+) follows a follower's observer master, which relays
   * its clients' requests and session touches to the leader.
   */
  observer?: 'direct' | 'observer-master';
  /** The observer's four-letter words, when they must differ from the harness's. */
  observerFourLetterWords?: readonly string[];
}

export type { PeerTraffic };

/** Voting servers. */
const SIZE = 3;

/**
 * Three ZooKeeper servers on loopback that reach each other only through proxies of the
 * harness (see PeerMesh), so that one server can be cut off from its peers silently (no
 * FIN, no RST, connections accepted but carrying nothing) while its clients still reach it
 * on its client port, and healed later.
 */
export class PartitionableEnsemble {
  readonly servers: ZkServer[] = [];
  private readonly isolated = new Set<number>();
  private master: number | undefined;

  private constructor(
    private readonly root: string,
    private readonly mesh: PeerMesh,
    private readonly peerPorts: readonly PeerPorts[],
    /** Each voting server's own observer master port (observer-master mode only). */
    private readonly masterPorts: readonly number[],
  ) {}

  /** Starts the proxies, then the servers, and waits until all of them serve. */
  static async start(options: PartitionableEnsembleOptions = {}): Promise<PartitionableEnsemble> {
    const { tickTime = 200, syncLimit = 10, initLimit = 20, observer } = options;
    const size = observer ? SIZE + 1 : SIZE;
    const withMasters = observer === 'observer-master';
    const reserved = await reservePorts(size * 3 + (withMasters ? SIZE : 0));
    const { ports } = reserved;
    const peerPorts = Array.from({ length: size }, (_, i) => ({
      quorumPort: ports[3 * i + 1],
      electionPort: ports[3 * i + 2],
    }));
    const masterPorts = withMasters ? ports.slice(size * 3) : [];
    // The proxies take their own ports while the servers' are still held, so none collide.
    const mesh = await PeerMesh.start(peerPorts, withMasters ? SIZE : undefined).finally(() => reserved.release());
    const root = mkdtempSync(join(tmpdir(), 'zk-lock-partitionable-'));
    const ensemble = new PartitionableEnsemble(root, mesh, peerPorts, masterPorts);
    try {
      for (let i = 0; i < size; i++) {
        const dataDir = join(ensemble.root, `s${i + 1}`);
        mkdirSync(dataDir, { recursive: true });
        const peers = mesh.serverLines(i, peerPorts[i], observer ? SIZE : undefined);
        const isObserver = i === SIZE;
        const masterPort = isObserver ? mesh.observerMasterPort : masterPorts[i];
        const extraConfig = [
          ...(isObserver ? ['peerType=observer'] : []),
          ...(masterPort === undefined ? [] : [`observerMasterPort=${masterPort}`]),
        ];
        const fourLetterWords = isObserver ? options.observerFourLetterWords : undefined;
        const config = { tickTime, syncLimit, initLimit, myid: i + 1, peers, dataDir, clientPort: ports[3 * i] };
        ensemble.servers.push(new ZkServer({ ...config, extraConfig, fourLetterWords }));
      }
      const voters = ensemble.servers.slice(0, SIZE);
      await Promise.all(voters.map((s) => s.start(false)));
      await Promise.all(voters.map((s) => s.waitServing()));
      if (observer) {
        // Only followers run an observer master: the observer's goes to one of them.
        if (withMasters) ensemble.observeThrough((await ensemble.leader()) === 0 ? 1 : 0);
        await ensemble.servers[SIZE].start();
      }
    } catch (error) {
      await ensemble.destroy();
      throw error;
    }
    return ensemble;
  }

  /** The observer's index, when there is one. */
  get observerIndex(): number | undefined {
    return this.servers.length > SIZE ? SIZE : undefined;
  }

  /**
   * From now on the observer's calls to an observer master reach follower `follower`
   * (observer-master mode); a connection the observer holds already stays where it is.
   */
  observeThrough(follower: number): void {
    this.mesh.observeThrough(follower, this.masterPorts[follower]);
    this.master = follower;
  }

  /** The follower the observer's calls to an observer master reach (observer-master mode). */
  get observerMaster(): number | undefined {
    return this.master;
  }

  /** Every server's client port: clients reach servers directly, never through the mesh. */
  get connectionString(): string {
    return this.servers.map((s) => s.connectionString).join(',');
  }

  clientConnect(i: number): string {
    return this.servers[i].connectionString;
  }

  /**
   * Index of the leader of the servers that are not isolated; waits for an election. An
   * isolated leader is ignored: it believes it leads until syncLimit runs out.
   */
  async leader(timeoutMs = 20_000): Promise<number> {
    const found = await waitFor(
      async () => {
        // eslint-disable-next-line @typescript-eslint/await-thenable -- some entries are plain values, on purpose
        const modes = await Promise.all(this.servers.map((_, i) => (this.isolated.has(i) ? undefined : this.mode(i))));
        const index = modes.indexOf('leader');
        return index >= 0 ? { index } : undefined;
      },
      { timeoutMs, intervalMs: 50, what: 'a leader among the servers that are not isolated' },
    );
    return found.index;
  }

  /** `leader`, `follower` or `observer`, or undefined while server i does not serve (looking, or down). */
  mode(i: number): Promise<string | undefined> {
    return this.servers[i].running ? this.servers[i].mode() : Promise.resolve(undefined);
  }

  /** Cuts server i off from every peer, quorum and election traffic alike, in both directions. */
  isolate(i: number): void {
    this.isolated.add(i);
    this.mesh.partition(this.isolated);
  }

  /** Lets server i reach its peers again; what was held back is delivered as TCP would. */
  heal(i: number): void {
    this.isolated.delete(i);
    this.mesh.partition(this.isolated);
  }

  /**
   * Delays by `ms` what server `from` sends to server `to` over their quorum connection
   * (a follower's forwarded requests and acks to its leader: slow commits); 0 ends it.
   */
  slowPeerLink(from: number, to: number, ms: number): void {
    this.mesh.slow(from, to, ms);
  }

  /** Kills server i (a crash). */
  kill(i: number): Promise<void> {
    return this.servers[i].stop('SIGKILL');
  }

  /** Starts server i again on its port and data, and waits until it serves. */
  async restart(i: number): Promise<void> {
    await this.servers[i].start(false);
    await this.servers[i].waitServing();
  }

  /** Peer bytes and connections that reached or left server i through the proxies so far. */
  peerTraffic(i: number): PeerTraffic {
    return this.mesh.traffic(i);
  }

  /**
   * Peer connections of server i that bypass the proxies; none are expected. Each TCP
   * connection it holds, but for its client port, must lead out to one of its own routes'
   * proxies, or come in on its quorum or election port from a socket of this process.
   */
  bypasses(i: number): string[] {
    const server = this.servers[i];
    if (server.pid === undefined) return [];
    const connections = tcpConnectionsOf(server.pid);
    // Read after the server's, so that every proxy socket it saw is still listed (in any state).
    const harness = new Set(tcpSocketsOf('self').map((s) => s.localPort));
    const outbound = this.mesh.outboundPorts(i);
    const { quorumPort, electionPort } = this.peerPorts[i];
    const inbound = new Set([quorumPort, electionPort, this.masterPorts[i]]);
    const viaProxy = (local: number, remote: number) =>
      outbound.has(remote) || (inbound.has(local) && harness.has(remote));
    return connections
      .filter((c) => c.localPort !== server.clientPort && !viaProxy(c.localPort, c.remotePort))
      .map((c) => `server ${i + 1}: 127.0.0.1:${c.localPort} <-> 127.0.0.1:${c.remotePort}`);
  }

  /** Kills the servers, then closes the proxies and deletes the data. */
  async destroy(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
    await this.mesh.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** `count` distinct free ports, held (listened on) until `release`. */
async function reservePorts(count: number): Promise<{ ports: number[]; release: () => Promise<void> }> {
  const servers: Server[] = [];
  const release = () =>
    Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))).then(() => undefined);
  try {
    for (let n = 0; n < count; n++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
  } catch (error) {
    await release();
    throw error;
  }
  return { ports: servers.map((s) => (s.address() as { port: number }).port), release };
}
