import * as zookeeper from 'node-zookeeper-client';

import { forceCloseClient } from '../../../lib/core/zookeeper/session/zk-client-internals';
import { waitFor } from '../wait-for';

const codeOf = (error: unknown): number | undefined => (error as zookeeper.Exception | null)?.getCode?.();
const isNoNode = (error: unknown): boolean => codeOf(error) === zookeeper.Exception.NO_NODE;

/** Requests one inspector keeps in flight at most: a test's thousand reads go in bounded batches. */
const MAX_IN_FLIGHT = 64;

/** The inspector's session timeout: the most the test server grants (20 × tickTime 200). */
const SESSION_TIMEOUT_MS = 4000;

/** Opens a connected client (digest `auth` added, if any). */
async function openClient(connectionString: string, auth: string | undefined): Promise<zookeeper.Client> {
  const client = zookeeper.createClient(connectionString, { sessionTimeout: SESSION_TIMEOUT_MS, retries: 0 });
  if (auth) client.addAuthInfo('digest', Buffer.from(auth));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inspector could not connect to ${connectionString}`)), 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return client;
}

/**
 * How `client` comes out of a lost connection: connected again, or its session gone. Gone
 * when the server said it expired, or when the client has not reconnected within the session
 * timeout: the server has expired the session by then (node-zookeeper-client may go on
 * reconnecting to an expired session without ever reporting it).
 */
function settled(client: zookeeper.Client): Promise<'connected' | 'gone'> {
  const now = client.getState();
  if (now === zookeeper.State.SYNC_CONNECTED) return Promise.resolve('connected');
  if (now === zookeeper.State.EXPIRED) return Promise.resolve('gone');
  return new Promise((resolve) => {
    const done = (outcome: 'connected' | 'gone'): void => {
      clearTimeout(timer);
      client.removeListener('state', onState);
      resolve(outcome);
    };
    const timer = setTimeout(() => done('gone'), SESSION_TIMEOUT_MS);
    const onState = (state: zookeeper.State): void => {
      if (state === zookeeper.State.SYNC_CONNECTED) done('connected');
      else if (state === zookeeper.State.EXPIRED) done('gone');
    };
    client.on('state', onState);
  });
}

/**
 * A plain node-zookeeper-client used by tests to look at ZooKeeper's own state (which
 * nodes exist, their data) independently of the library under test.
 *
 * It is an observer, not a client under test, so nothing a test does to its own process
 * may cost it its view: a test that blocks the event loop for most of the session timeout
 * (the inspector's pings wait too), or a loaded machine that starves the process for
 * seconds, can let the server expire the inspector's 4 s session (the most the test
 * server grants). Its reads and idempotent writes then go again, on the connection it
 * gets back or on a new session (its session holds nothing a test relies on, but for
 * `deletion` watches and `attempt`'s probes, which are not repeated). And it keeps at most
 * `MAX_IN_FLIGHT` requests in flight: a thousand reads at once queue behind each other in
 * the client and the server rather than as one burst.
 */
export class ZkInspector {
  private inFlight = 0;
  private readonly queued: Array<() => void> = [];
  /** The new session being opened after an expiry, shared by the requests that met it. */
  private renewal: Promise<void> | undefined;

  private constructor(
    private client: zookeeper.Client,
    private readonly connectionString: string,
    private readonly auth: string | undefined,
  ) {}

  /** `auth`: optional digest `user:password`, to act as a client holding those credentials. */
  static async connect(connectionString: string, auth?: string): Promise<ZkInspector> {
    return new ZkInspector(await openClient(connectionString, auth), connectionString, auth);
  }

  /**
   * Runs `request` on the inspector's client, when one of the `MAX_IN_FLIGHT` places is
   * free; again after a connection loss, on the connection that comes back or, if ZooKeeper
   * expired the session meanwhile, on a new one. Only for reads and idempotent writes.
   */
  private async run<T>(request: (client: zookeeper.Client) => Promise<T>): Promise<T> {
    if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => this.queued.push(resolve));
    this.inFlight++;
    try {
      for (;;) {
        const client = this.client;
        try {
          return await request(client);
        } catch (error) {
          const code = codeOf(error);
          if (code !== zookeeper.Exception.CONNECTION_LOSS && code !== zookeeper.Exception.SESSION_EXPIRED) throw error;
          if ((await settled(client)) === 'gone') await this.renew(client);
        }
      }
    } finally {
      this.inFlight--;
      this.queued.shift()?.();
    }
  }

  /** A new session in place of `gone`'s (once, whoever asks); the old client stops reconnecting. */
  private renew(gone: zookeeper.Client): Promise<void> {
    if (this.client !== gone) return Promise.resolve();
    forceCloseClient(gone);
    this.renewal ??= openClient(this.connectionString, this.auth)
      .then((client) => {
        this.client = client;
      })
      .finally(() => (this.renewal = undefined));
    return this.renewal;
  }

  /** Children of `path`, sorted; `null` when `path` does not exist. */
  children(path: string): Promise<string[] | null> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.getChildren(path, (error, children) => {
            if (isNoNode(error)) return resolve(null);
            if (error) return reject(error);
            resolve([...children].sort());
          }),
        ),
    );
  }

  /**
   * Resolves once `path` has no children (or is gone). For deletes another process sent before
   * it answered the test (a release resolves once its delete is sent): ZooKeeper may apply them
   * just after the answer arrives, so a read at once can still see the nodes. Rejects after 5 s.
   */
  async emptied(path: string): Promise<void> {
    await waitFor(async () => ((await this.children(path)) ?? []).length === 0, {
      what: () => `no node left under ${path}`,
    });
  }

  /** The zxid of the last change to `path`'s children (its `pzxid`), `null` when `path` does not exist. */
  childrenZxid(path: string): Promise<bigint | null> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.exists(path, (error, stat) => {
            if (error) return reject(error);
            resolve(stat ? stat.pzxid.readBigInt64BE(0) : null);
          }),
        ),
    );
  }

  exists(path: string): Promise<boolean> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.exists(path, (error, stat) => (error ? reject(error) : resolve(Boolean(stat)))),
        ),
    );
  }

  /** The session owning the ephemeral node `path`, `0x…` (16 hex digits); `null` when it does not exist or is persistent. */
  owner(path: string): Promise<string | null> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.exists(path, (error, stat) => {
            if (error) return reject(error);
            const owner = stat?.ephemeralOwner.readBigUInt64BE(0) ?? 0n;
            resolve(owner === 0n ? null : `0x${owner.toString(16).padStart(16, '0')}`);
          }),
        ),
    );
  }

  /** Resolves once `path` (existing now) is deleted: a watch of this inspector's own session. */
  async deletion(path: string): Promise<void> {
    let deleted!: () => void;
    const seen = new Promise<void>((resolve) => (deleted = resolve));
    const exists = await new Promise<boolean>((resolve, reject) =>
      this.client.exists(
        path,
        (event) => event.getType() === zookeeper.Event.NODE_DELETED && deleted(),
        (error, stat) => (error ? reject(error) : resolve(Boolean(stat))),
      ),
    );
    if (!exists) throw new Error(`${path} does not exist: nothing to watch`);
    return seen;
  }

  data(path: string): Promise<string | null> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.getData(path, (error, data) => {
            if (isNoNode(error)) return resolve(null);
            if (error) return reject(error);
            resolve(data ? data.toString('utf8') : '');
          }),
        ),
    );
  }

  /** Every node below `path` (depth-first), as full paths. */
  async tree(path: string): Promise<string[]> {
    const children = await this.children(path);
    if (!children) return [];
    const out: string[] = [];
    for (const child of children) {
      const full = `${path}/${child}`;
      out.push(full, ...(await this.tree(full)));
    }
    return out;
  }

  /** The node's ACL as `scheme:id=perms` strings. */
  acl(path: string): Promise<string[]> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.getACL(path, (error, acls) =>
            error
              ? reject(error)
              : resolve(
                  acls.map((a) => `${a.id.scheme}:${a.id.id}=${(a as unknown as { permission: number }).permission}`),
                ),
          ),
        ),
    );
  }

  /** A raw request's outcome: 'ok' or ZooKeeper's error name (e.g. NO_AUTH). */
  attempt(op: 'remove' | 'create' | 'setData', path: string): Promise<string> {
    return new Promise((resolve) => {
      const done = (error: unknown): void =>
        resolve(error ? String((error as zookeeper.Exception).getName?.() ?? error) : 'ok');
      if (op === 'remove') this.client.remove(path, -1, done);
      else if (op === 'create') this.client.create(path, Buffer.from('x'), zookeeper.CreateMode.EPHEMERAL, done);
      else this.client.setData(path, Buffer.from('stolen'), -1, done);
    });
  }

  /** Deletes `path` and everything below it. */
  async removeTree(path: string): Promise<void> {
    for (const child of (await this.children(path)) ?? []) await this.removeTree(`${path}/${child}`);
    await this.run(
      (client) =>
        new Promise<void>((resolve, reject) =>
          client.remove(path, -1, (error) => (!error || isNoNode(error) ? resolve() : reject(error))),
        ),
    );
  }

  /** A persistent node, e.g. a lock root for a test. */
  create(path: string, data = ''): Promise<void> {
    return this.run(
      (client) =>
        new Promise((resolve, reject) =>
          client.mkdirp(path, Buffer.from(data), (error) => (error ? reject(error) : resolve())),
        ),
    );
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.client.once('disconnected', () => resolve());
      this.client.close();
    });
  }
}
