import { randomBytes } from 'node:crypto';
import * as zookeeper from 'node-zookeeper-client';
import type { Counts } from './workers/impl.protocol.js';

/** Callback of every raw request: the error, or null. */
type Done<T = void> = (error: Error | null, value?: T) => void;

const EMPTY = Buffer.alloc(0);
const { EPHEMERAL_SEQUENTIAL, PERSISTENT } = zookeeper.CreateMode;

/**
 * A bare node-zookeeper-client 1.1.3 session that counts what it sends, by the library's
 * op names (`create`, `getChildren`, `getData`, `remove`, `notification`). Plain callbacks
 * and nothing else: the floor any client on this transport can reach.
 */
export class RawZk {
  readonly counts: Counts = {};

  private constructor(readonly client: zookeeper.Client) {}

  static connect(connectionString: string, sessionTimeout = 10_000): Promise<RawZk> {
    // retries 0, as the library: a retried sequential create could leave a second node.
    const client = zookeeper.createClient(connectionString, { sessionTimeout, retries: 0 });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        client.close();
        reject(new Error(`raw client: no session with ${connectionString} within 15 s`));
      }, 15_000);
      client.once('connected', () => {
        clearTimeout(timer);
        resolve(new RawZk(client));
      });
      client.connect();
    });
  }

  create(path: string, mode: number, done: Done<string>): void {
    this.count('create');
    this.client.create(path, EMPTY, mode, (error, created) => done(error as Error | null, created));
  }

  getChildren(path: string, done: Done<string[]>): void {
    this.count('getChildren');
    this.client.getChildren(path, (error, children) => done(error as Error | null, children));
  }

  /** getData with a watch: `onChange` runs once when the node changes or goes. */
  watchData(path: string, onChange: () => void, done: Done): void {
    this.count('getData');
    this.client.getData(
      path,
      () => {
        this.count('notification');
        onChange();
      },
      (error) => done(error as Error | null),
    );
  }

  remove(path: string, done: Done): void {
    this.count('remove');
    this.client.remove(path, -1, (error) => done(error as Error | null));
  }

  /** One ZooKeeper multi creating an ephemeral sequential node under each of `paths` (all or none): the created paths. */
  multiCreate(paths: readonly string[], done: Done<string[]>): void {
    this.count('multi');
    const transaction = this.client.transaction();
    for (const path of paths) transaction.create(path, EMPTY, zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL);
    transaction.commit((error, results: Array<{ path: string }>) =>
      done(
        error as Error | null,
        results?.map((result) => result.path),
      ),
    );
  }

  /** One ZooKeeper multi deleting every path of `paths` (all or none). */
  multiRemove(paths: readonly string[], done: Done): void {
    this.count('multi');
    const transaction = this.client.transaction();
    for (const path of paths) transaction.remove(path, -1);
    transaction.commit((error) => done(error as Error | null));
  }

  /** Creates a persistent node and its parents; an existing one is fine. Not counted. */
  mkdirp(path: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.mkdirp(path, PERSISTENT, (error) =>
        error && !isCode(error, zookeeper.Exception.NODE_EXISTS) ? reject(error) : resolve(),
      ),
    );
  }

  children(path: string): Promise<string[]> {
    return new Promise((resolve, reject) =>
      this.client.getChildren(path, (error, children) => {
        if (error && isCode(error, zookeeper.Exception.NO_NODE)) resolve([]);
        else if (error) reject(error);
        else resolve(children);
      }),
    );
  }

  /** Deletes `path` and everything under it (clean-up; not counted). */
  async removeTree(path: string): Promise<void> {
    for (const child of await this.children(path)) await this.removeTree(`${path}/${child}`);
    await new Promise<void>((resolve, reject) =>
      this.client.remove(path, -1, (error) =>
        error && !isCode(error, zookeeper.Exception.NO_NODE) ? reject(error) : resolve(),
      ),
    );
  }

  /** Ends the session and waits until the socket is closed. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.client.getState() !== zookeeper.State.SYNC_CONNECTED) {
        this.client.close();
        return resolve();
      }
      const timer = setTimeout(resolve, 5_000);
      this.client.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
      this.client.close();
    });
  }

  private count(op: string): void {
    this.counts[op] = (this.counts[op] ?? 0) + 1;
  }
}

export function isCode(error: unknown, code: number): boolean {
  return (error as { getCode?: () => number } | null)?.getCode?.() === code;
}

/** Kazoo's node-name format (as the library's): `<32 hex>__lock__<seq>` or `__rlock__`. */
export function nodePrefix(mode: 'write' | 'read' = 'write'): string {
  return `${randomBytes(16).toString('hex')}${mode === 'write' ? '__lock__' : '__rlock__'}`;
}

function sequenceOf(node: string): number {
  return Number(node.slice(-10));
}

/**
 * The node that blocks `node`, or null if it holds: for a writer its immediate
 * predecessor, for a reader the nearest lower writer (the ZooKeeper recipe).
 */
export function blockerOf(children: readonly string[], node: string): string | null {
  const mine = sequenceOf(node);
  const reader = node.includes('__rlock__');
  let blocker: string | null = null;
  let best = -Infinity;
  for (const child of children) {
    const seq = sequenceOf(child);
    if (seq >= mine || seq <= best) continue;
    if (reader && !child.includes('__lock__')) continue;
    best = seq;
    blocker = child;
  }
  return blocker;
}

/** One serial uncontended cycle, no pipelining: create, then getChildren, then delete. */
export function rawCycle(zk: RawZk, dir: string, prefix: string, done: Done): void {
  zk.create(`${dir}/${prefix}`, EPHEMERAL_SEQUENTIAL, (error, path) => {
    if (error) return done(error);
    zk.getChildren(dir, (error2, children) => {
      if (error2) return done(error2);
      if (blockerOf(children!, path!.slice(dir.length + 1)) !== null)
        return done(new Error(`raw cycle: ${dir} is contended`));
      zk.remove(path!, done);
    });
  });
}

/**
 * One uncontended cycle with the requests in flight as ours sends them: the children read
 * right behind the create (per-session FIFO order makes it see the create), then the
 * delete once both are answered. The floor for any client whose `release()` answers after
 * its delete is committed: two round trips, with nothing but plain callbacks around them.
 */
export function pipelinedCycle(zk: RawZk, dir: string, prefix: string, done: Done): void {
  let created: string | undefined;
  let children: string[] | undefined;
  let failed = false;
  const both = (error: Error | null): void => {
    if (failed) return;
    if (error) {
      failed = true;
      return done(error);
    }
    if (created === undefined || children === undefined) return;
    if (blockerOf(children, created.slice(dir.length + 1)) !== null)
      return done(new Error(`raw pipelined cycle: ${dir} is contended`));
    zk.remove(created, done);
  };
  zk.create(`${dir}/${prefix}`, EPHEMERAL_SEQUENTIAL, (error, path) => {
    created = path;
    both(error);
  });
  zk.getChildren(dir, (error, list) => {
    children = list;
    both(error);
  });
}

/**
 * The recipe with plain callbacks: create; getChildren; if blocked, watch the blocker with
 * getData and read the children again when it fires. Calls back with our node's path.
 */
export function rawAcquire(zk: RawZk, dir: string, prefix: string, done: Done<string>): void {
  zk.create(`${dir}/${prefix}`, EPHEMERAL_SEQUENTIAL, (error, path) => {
    if (error) return done(error);
    const node = path!.slice(dir.length + 1);
    const check = (): void =>
      zk.getChildren(dir, (error2, children) => {
        if (error2) return done(error2);
        const blocker = blockerOf(children!, node);
        if (blocker === null) return done(null, path);
        zk.watchData(`${dir}/${blocker}`, check, (error3) => {
          if (!error3) return; // the watch fires `check` when the blocker goes
          if (isCode(error3, zookeeper.Exception.NO_NODE))
            check(); // gone already: no watch was set
          else done(error3);
        });
      });
    check();
  });
}

export function rawRelease(zk: RawZk, path: string, done: Done): void {
  zk.remove(path, done);
}

/** Promise forms, for setup code and the orchestration around the timed callbacks. */
export const rawAcquireAsync = (zk: RawZk, dir: string, prefix: string): Promise<string> =>
  new Promise((resolve, reject) =>
    rawAcquire(zk, dir, prefix, (error, path) => (error ? reject(error) : resolve(path!))),
  );

export const rawReleaseAsync = (zk: RawZk, path: string): Promise<void> =>
  new Promise((resolve, reject) => rawRelease(zk, path, (error) => (error ? reject(error) : resolve())));

/**
 * Runs the JVM's JIT of the server paths every scenario uses (create, getChildren,
 * delete) hot before round 1: `chains` concurrent uncontended loops on one session for
 * `durationMs`. Returns the cycles done.
 */
export async function warmUpServer(zk: RawZk, root: string, durationMs: number, chains = 64): Promise<number> {
  const dirs = Array.from({ length: chains }, (_, i) => `${root}/warmup/${i}`);
  await Promise.all(dirs.map((dir) => zk.mkdirp(dir)));
  const until = Date.now() + durationMs;
  let cycles = 0;
  await Promise.all(
    dirs.map(
      (dir) =>
        new Promise<void>((resolve, reject) => {
          const prefix = nodePrefix();
          const next = (error: Error | null): void => {
            if (error) return reject(error);
            if (Date.now() >= until) return resolve();
            cycles++;
            rawCycle(zk, dir, prefix, next);
          };
          next(null);
        }),
    ),
  );
  return cycles;
}
