import * as zookeeper from 'node-zookeeper-client';

const isNoNode = (error: unknown): boolean =>
  (error as zookeeper.Exception | null)?.getCode?.() === zookeeper.Exception.NO_NODE;

/**
 * A plain node-zookeeper-client used by tests to look at ZooKeeper's own state (which
 * nodes exist, their data) independently of the library under test.
 */
export class ZkInspector {
  private constructor(private readonly client: zookeeper.Client) {}

  /** `auth`: optional digest `user:password`, to act as a client holding those credentials. */
  static async connect(connectionString: string, auth?: string): Promise<ZkInspector> {
    const client = zookeeper.createClient(connectionString, { sessionTimeout: 4000, retries: 0 });
    if (auth) client.addAuthInfo('digest', Buffer.from(auth));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector could not connect to ${connectionString}`)), 10_000);
      client.once('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      client.connect();
    });
    return new ZkInspector(client);
  }

  /** Children of `path`, sorted; `null` when `path` does not exist. */
  children(path: string): Promise<string[] | null> {
    return new Promise((resolve, reject) =>
      this.client.getChildren(path, (error, children) => {
        if (isNoNode(error)) return resolve(null);
        if (error) return reject(error);
        resolve([...children].sort());
      }),
    );
  }

  /** The zxid of the last change to `path`'s children (its `pzxid`), `null` when `path` does not exist. */
  childrenZxid(path: string): Promise<bigint | null> {
    return new Promise((resolve, reject) =>
      this.client.exists(path, (error, stat) => {
        if (error) return reject(error);
        resolve(stat ? stat.pzxid.readBigInt64BE(0) : null);
      }),
    );
  }

  exists(path: string): Promise<boolean> {
    return new Promise((resolve, reject) =>
      this.client.exists(path, (error, stat) => (error ? reject(error) : resolve(Boolean(stat)))),
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
    return new Promise((resolve, reject) =>
      this.client.getData(path, (error, data) => {
        if (isNoNode(error)) return resolve(null);
        if (error) return reject(error);
        resolve(data ? data.toString('utf8') : '');
      }),
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
    return new Promise((resolve, reject) =>
      this.client.getACL(path, (error, acls) =>
        error
          ? reject(error)
          : resolve(
              acls.map((a) => `${a.id.scheme}:${a.id.id}=${(a as unknown as { permission: number }).permission}`),
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
    await new Promise<void>((resolve, reject) =>
      this.client.remove(path, -1, (error) => (!error || isNoNode(error) ? resolve() : reject(error))),
    );
  }

  /** A persistent node, e.g. a lock root for a test. */
  create(path: string, data = ''): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.mkdirp(path, Buffer.from(data), (error) => (error ? reject(error) : resolve())),
    );
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.client.once('disconnected', () => resolve());
      this.client.close();
    });
  }
}
