import { ZkLockBackend, type ZkLockHandle, type ZkLockOptions } from '../../lib/index';
import { TcpProxy } from './tcp-proxy';
import { waitUntil } from './wait-until';
import { uniqueRoot, zkConnect, zkPort } from './zk-test-env';
import { expireSession } from './zookeeper/expire-session';
import { ZkInspector } from './zookeeper/zk-inspector';

/** The name of a held lock's node within its directory. */
export const nodeOf = (lock: ZkLockHandle): string => lock.path.slice(lock.path.lastIndexOf('/') + 1);

/**
 * One suite's view of ZooKeeper: its own root znode, an inspector reading ZooKeeper's
 * state independently of the library, and lock clients that are all closed at the end.
 */
export class LockFixture {
  private readonly backends: ZkLockBackend[] = [];
  private readonly proxies = new Map<ZkLockBackend, TcpProxy>();
  /** The wait of the `releasesConfirmed` calls of the current synchronous run. */
  private confirming: Promise<void> | undefined;

  private constructor(
    readonly rootPath: string,
    readonly inspector: ZkInspector,
    /** The server its clients and inspector talk to: the suite's, or one a test file started. */
    readonly connectionString: string,
  ) {}

  static async create(suite: string, connectionString = zkConnect()): Promise<LockFixture> {
    return new LockFixture(uniqueRoot(suite), await ZkInspector.connect(connectionString), connectionString);
  }

  async backend(options: Partial<ZkLockOptions> = {}): Promise<ZkLockBackend> {
    // Directories go with the release here, so tests can see ZooKeeper's state settle at
    // once; the grace period of the default is tested on its own.
    const backend = await ZkLockBackend.connect({
      connectionString: this.connectionString,
      rootPath: this.rootPath,
      sessionTimeoutMs: 4000,
      emptyDirectoryGraceMs: 0,
      ...options,
    });
    this.backends.push(backend);
    return backend;
  }

  /** A lock client whose session `expire()` can end on purpose (it connects through a proxy). */
  async expirable(options: Partial<ZkLockOptions> = {}): Promise<ZkLockBackend> {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    const backend = await this.backend({ ...options, connectionString: proxy.connectionString });
    this.proxies.set(backend, proxy);
    return backend;
  }

  /**
   * Expires an `expirable()` client's session on the server. The client is kept from
   * reconnecting meanwhile: node-zookeeper-client reconnects within a millisecond and would
   * take its session back from the expiring connection before that can close it.
   */
  async expire(backend: ZkLockBackend): Promise<void> {
    const proxy = this.proxies.get(backend);
    if (!proxy) throw new Error('expire() needs a client made by expirable()');
    const credentials = backend.client.session.credentials();
    await proxy.stop();
    // The stopped proxy already keeps the client from reconnecting: no need to block this
    // process's event loop meanwhile (a block of seconds on a busy machine put the test's
    // own other clients at risk, and ate into the deadlines under test).
    await expireSession(zkConnect(), credentials, undefined, { blockEventLoop: false });
    await proxy.start();
  }

  async many(count: number, options: Partial<ZkLockOptions> = {}): Promise<ZkLockBackend[]> {
    return Promise.all(Array.from({ length: count }, () => this.backend(options)));
  }

  /**
   * Lock nodes in a lock's directory, sorted; `null` when the directory is gone. Read once
   * every release of this fixture's clients was confirmed (`release()` resolves when its
   * delete is sent: a read on another connection could otherwise pass it). Tests of that
   * early answer itself read `inspector` directly.
   */
  async nodes(name: string, backend = this.backends[0]): Promise<string[] | null> {
    await this.releasesConfirmed();
    return this.inspector.children(backend.pathOf(name));
  }

  /**
   * Every node its connected clients released, confirmed gone by ZooKeeper (or with its
   * session). A client cut off is not waited for: its deletes wait for it to come back.
   */
  releasesConfirmed(): Promise<void> {
    // Calls made in one synchronous run (`Promise.all(names.map((name) => fx.nodes(name)))`
    // over hundreds of names) share one wait: a wait each, over every handle, kept the event
    // loop from the inspector's pings long enough to expire its 4 s session on a busy machine.
    if (this.confirming) return this.confirming;
    const confirming = Promise.all(
      this.backends
        .filter((backend) => !backend.client.isClosed && backend.client.session.isConnected)
        .map((backend) => backend.releasesConfirmed()),
    ).then(() => undefined);
    this.confirming = confirming;
    queueMicrotask(() => (this.confirming = undefined)); // a later call sees later releases
    return confirming;
  }

  /** Waits until `count` lock nodes queue on `name` (so the next request queues after them). */
  queued(name: string, count: number): Promise<void> {
    return waitUntil(async () => (await this.nodes(name))?.length === count, `${count} nodes queue on ${name}`);
  }

  /** Every znode under this suite's root, once every release was confirmed (see `nodes`). */
  async tree(): Promise<string[]> {
    await this.releasesConfirmed();
    return this.inspector.tree(this.rootPath);
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.close()));
    await Promise.all([...this.proxies.values()].map((p) => p.stop()));
    await this.inspector.removeTree(this.rootPath);
    await this.inspector.removeTree(`${this.rootPath}-records`); // the records kept beside the locks
    await this.inspector.removeTree(`${this.rootPath}-groups`); // and the groups
    await this.inspector.close();
  }
}
