import { freePort } from '../../test/support/free-port.js';
import { ZkServer } from '../../test/support/zookeeper/zk-server.js';
import { serversOf } from './server-state.js';

/** The ZooKeeper the benchmark talks to: its own standalone server or ensemble, or one given by ZK_CONNECT. */
export interface ZkTarget {
  readonly connectionString: string;
  /** true/false for the server it started; null for an external server (unknown). */
  readonly forceSync: boolean | null;
  readonly external: boolean;
  readonly tickTime: number | null;
  readonly jvmArgs: readonly string[] | null;
  /** What the sessions talk to, for the report. */
  readonly topology: string;
  /** The server processes it started (none for an external server): their CPU is sampled around each run. */
  readonly serverPids: () => number[];
  /** Every server, each as a connection string of its own, with its process when the benchmark started it. */
  readonly servers: ReadonlyArray<{ readonly address: string; readonly pid: () => number | undefined }>;
  stop(): Promise<void>;
}

/**
 * ZooKeeper's own scripts start the server with `-Xmx1000m` (zkEnv.sh) and the JVM's
 * default JIT and collector; the benchmark does the same, not the tests' quick-start
 * flags (C1 only), so the server is not slower than in production.
 */
const PRODUCTION_JVM_ARGS = ['-Xmx1000m'];

export async function openZkTarget(options: {
  connectionString?: string;
  /** The existing server's processes on this machine, if known. */
  serverPids?: readonly number[];
  forceSync: boolean;
  tickTime?: number;
  ensemble?: boolean;
  /** On the ensemble: `connectionString` names all three servers, for sessions to be spread over them. */
  spread?: boolean;
}): Promise<ZkTarget> {
  if (options.connectionString) {
    return {
      connectionString: options.connectionString,
      forceSync: null,
      external: true,
      tickTime: null,
      jvmArgs: null,
      topology: 'existing server (ZK_CONNECT)',
      serverPids: () => [...(options.serverPids ?? [])],
      servers: serversOf(options.connectionString).map((address) => ({ address, pid: () => undefined })),
      stop: async () => undefined,
    };
  }
  const tickTime = options.tickTime ?? 2000;
  if (options.ensemble) return openEnsemble(options.forceSync, tickTime, options.spread === true);
  const server = new ZkServer({ tickTime, forceSync: options.forceSync, jvmArgs: PRODUCTION_JVM_ARGS });
  await server.start();
  return {
    connectionString: server.connectionString,
    forceSync: options.forceSync,
    external: false,
    tickTime,
    jvmArgs: PRODUCTION_JVM_ARGS,
    topology: 'standalone server',
    serverPids: () => (server.pid === undefined ? [] : [server.pid]),
    servers: [{ address: server.connectionString, pid: () => server.pid }],
    stop: () => server.destroy(),
  };
}

/**
 * Three servers on loopback, with the standalone server's flags (test/support's ZkEnsemble
 * uses the tests' quick-start flags). Every session, of every implementation, is pinned to
 * the same follower: the case of two clients in three, where each write goes to the leader
 * and waits for a quorum; a random server per session would add a leader-or-not lottery
 * to every per-round ratio. `spread` (the capacity pass): the connection string names every
 * server, and the pass places each session on one of them, the same way for every implementation.
 */
async function openEnsemble(forceSync: boolean, tickTime: number, spread: boolean, size = 3): Promise<ZkTarget> {
  // Client, quorum and election port of each server, all distinct (a port is only reserved once a server binds it).
  const ports = new Set<number>();
  while (ports.size < size * 3) ports.add(await freePort());
  const [client, quorum, election] = [0, 1, 2].map((k) => [...ports].slice(k * size, (k + 1) * size));
  const peers = Array.from({ length: size }, (_, i) => `server.${i + 1}=127.0.0.1:${quorum[i]}:${election[i]}`);
  const servers = Array.from(
    { length: size },
    (_, i) =>
      new ZkServer({ tickTime, forceSync, myid: i + 1, peers, clientPort: client[i], jvmArgs: PRODUCTION_JVM_ARGS }),
  );
  const stop = async (): Promise<void> => {
    await Promise.allSettled(servers.map((s) => s.destroy()));
  };
  try {
    await Promise.all(servers.map((s) => s.start(false)));
    const modes = await Promise.all(servers.map((s) => s.waitServing(60_000)));
    const follower = modes.indexOf('follower');
    if (follower < 0) throw new Error(`no follower in the ensemble (modes: ${modes.join(', ')})`);
    const ensemble = `${size}-server loopback ensemble (${modes.map((mode, i) => `server ${i + 1} ${mode}`).join(', ')})`;
    return {
      connectionString: spread ? servers.map((s) => s.connectionString).join(',') : servers[follower].connectionString,
      forceSync,
      external: false,
      tickTime,
      jvmArgs: PRODUCTION_JVM_ARGS,
      topology: spread
        ? `${ensemble}, sessions spread round-robin over the ${size}`
        : `${ensemble}, every session on server ${follower + 1}, a follower`,
      serverPids: () => servers.flatMap((s) => (s.pid === undefined ? [] : [s.pid])),
      servers: servers.map((s) => ({ address: s.connectionString, pid: () => s.pid })),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
