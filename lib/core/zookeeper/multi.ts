import type { NodeFormat, LockHandle, MultiAcquireOptions } from '../port/lock-backend.js';
import { ZkOperationError } from '../errors/errors.js';
import { newLockNodePrefix, nodeFormatFor } from '../port/node-format.js';
import type { DirectorySweeper } from './queue/directory-sweeper.js';
import { listChildrenTogether, type Listing } from './queue/directory.js';
import type { SentCreate } from './queue/acquisition.js';
import type { ResolvedAcquireOptions } from '../port/options.js';
import type { NodeReaper } from './queue/node-reaper.js';
import type { ZkClient } from './session/zk-client.js';
import type { ZkMultiOp, ZkSession } from './session/zk-session.js';
import type { LockGroupRequests } from '../multi/lock-group-handle.js';
import type { PlannedLock } from '../multi/multi-lock-plan.js';

/** What the ZooKeeper backend lends its multi-locks. */
export interface ZkLockGroupContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  readonly identity: Buffer;
  /** The client's default node format. */
  readonly nodeFormat: NodeFormat;
  pathOf(name: string): string;
  /** Connects on first use. */
  started(): Promise<void>;
  /** `tryAcquire`, with its first create sent already when `sent` is given. */
  tryAcquire(name: string, options: ResolvedAcquireOptions, sent?: SentCreate): Promise<LockHandle | null>;
}

/** The group's creates and reads, once sent: per lock, its node's path (or `undefined`: not created) and its listing. */
interface GroupCreates {
  readonly created: Array<Promise<string | undefined>>;
  readonly reads: Array<Promise<Listing | null>>;
}

interface Removal {
  readonly session: ZkSession;
  readonly dir: string;
  readonly node: string;
  readonly done: (outcome: Promise<void>) => void;
}

/**
 * A group's requests on ZooKeeper. ZooKeeper commits each write separately, and the
 * commits, not the round trips, are what several locks cost: so the creates of a wave go
 * as one `multi` (the children reads pipelined right behind it, as one `multiRead` when
 * the server takes it), and a group's deletes as another; each as several, all sent at
 * once, when over `MAX_REQUEST_BYTES` (a longer request makes ZooKeeper drop the
 * connection). Every other step is each lock's own (`QueueAcquisition`, `NodeReaper`),
 * which keeps every recovery, whichever multi a lock's node is in: a multi
 * creates all its nodes or none, so when its reply is lost each lock finds its node, or
 * not, by its guid as after a single create; when it fails (a directory not there yet),
 * each lock creates its node alone, making the directory; a lost `multiRead` reply makes
 * each lock read its directory again; and a failed multi delete (a node already gone)
 * falls back to one delete per node.
 */
export class ZkLockGroupRequests implements LockGroupRequests {
  constructor(private readonly ctx: ZkLockGroupContext) {}

  async tryAll(
    locks: readonly PlannedLock[],
    signals: readonly AbortSignal[],
    { nodeFormat, release }: Pick<MultiAcquireOptions, 'nodeFormat' | 'release'>,
  ): Promise<Array<PromiseSettledResult<LockHandle | null>>> {
    // Every node's name first: a mode its format refuses fails the call before anything is sent.
    const formats = locks.map(({ mode }) => nodeFormatFor(mode, nodeFormat, this.ctx.nodeFormat));
    await this.ctx.started();
    const batch =
      this.ctx.client.isClosed || signals.some((s) => s.aborted) ? undefined : this.prepareCreates(locks, formats); // else each try says why
    // Every try is set up (synchronously, up to its wait for the node) before the requests
    // leave: the client is then idle while the server works, whose threads need the cores.
    const tries = locks.map(({ name, mode }, i) =>
      this.ctx.tryAcquire(
        name,
        { mode, nodeFormat: formats[i], release, signal: signals[i], timeoutMs: 0 },
        batch?.sent[i],
      ),
    );
    batch?.send();
    return Promise.allSettled(tries);
  }

  releaseAll(handles: readonly LockHandle[]): Promise<Array<PromiseSettledResult<void>>> {
    const removals: Removal[] = [];
    // Each release sends its delete synchronously: collected here, then sent as one.
    const releases = this.ctx.reaper.diverting(
      (session, dir, node) => new Promise<void>((done) => removals.push({ session, dir, node, done })),
      () => handles.map((handle) => handle.release()),
    );
    for (const session of new Set(removals.map((removal) => removal.session))) {
      this.removeTogether(
        session,
        removals.filter((removal) => removal.session === session),
      );
    }
    return Promise.allSettled(releases);
  }

  /**
   * One multi creating a node per lock, each named with a guid of its own, and each
   * directory's children read right behind it: the creates as each try will see them
   * (`sent`), and `send()`, which sends them all in one socket write.
   */
  private prepareCreates(
    locks: readonly PlannedLock[],
    formats: readonly NodeFormat[],
  ): { sent: SentCreate[]; send(): void } {
    const session = this.ctx.client.liveSession();
    const nodes = locks.map(({ name, mode }, i) => ({
      dir: this.ctx.pathOf(name),
      prefix: newLockNodePrefix(mode, formats[i]),
    }));
    const { identity: data } = this.ctx;
    const claimed = nodes.map(() => false);
    let sendNow!: () => void;
    const requests = new Promise<GroupCreates>((resolve) => {
      sendNow = () => {
        // A try that stopped before taking its create would leave its node to nobody: then
        // nothing is sent, and each try that did take one creates its node alone.
        if (!claimed.every(Boolean))
          return resolve({ created: nodes.map(async () => undefined), reads: nodes.map(async () => null) });
        resolve(
          session.sendingTogether(() => ({
            created: this.sendCreates(session, creates),
            reads: listChildrenTogether(
              session,
              nodes.map(({ dir }) => dir),
            ).map((read) => read.catch(() => null)),
          })),
        );
      };
    });
    const creates = nodes.map(({ dir, prefix }): ZkMultiOp => ({
      op: 'create',
      path: `${dir}/${prefix}`,
      data,
      mode: 'ephemeral-sequential',
    }));
    const sent = nodes.map(({ prefix }, i): SentCreate => {
      const created = requests
        .then((sent) => sent.created[i])
        .catch((error: unknown) => {
          // ZooKeeper refused the lock's transaction: nothing of it was created. A lost reply is the lock's to recover.
          if (error instanceof ZkOperationError && error.zkCode !== 'CONNECTION_LOSS') return undefined;
          throw error;
        });
      created.catch(() => undefined); // a try whose session was replaced meanwhile drops it unread
      return {
        session,
        prefix,
        created,
        listed: requests.then((sent) => sent.reads[i]),
        claim: () => (claimed[i] = true),
      };
    });
    return { sent, send: sendNow };
  }

  /**
   * Per lock, in order, the path of the node it created: `creates` as `multi`s of at most
   * `MAX_REQUEST_BYTES` each (one unless the names are long or many), all sent at once.
   * Each lock's outcome is its own multi's; the group never needed them all in one.
   */
  private sendCreates(session: ZkSession, creates: readonly ZkMultiOp[]): Array<Promise<string | undefined>> {
    return session
      .inRequests(creates, (op) => [op])
      .flatMap((run) => {
        const sending = session.multi(run);
        return run.map((_, i) => sending.then((paths) => paths[i]));
      });
  }

  /**
   * One multi deleting every node (several when over `MAX_REQUEST_BYTES`); when one fails,
   * one guaranteed delete per node of its instead.
   */
  private removeTogether(session: ZkSession, removals: readonly Removal[]): void {
    const alone = (removal: Removal): Promise<void> =>
      this.ctx.reaper.remove(removal.session, removal.dir, { node: removal.node, prefix: removal.node });
    if (removals.length === 1 || session.isLost) {
      for (const removal of removals) removal.done(alone(removal));
      return;
    }
    const opOf = ({ dir, node }: Removal): ZkMultiOp => ({ op: 'remove', path: `${dir}/${node}` });
    const runs = session.inRequests(removals, (removal) => [opOf(removal)]);
    const sending = runs.map((run) => session.multi(run.map(opOf)));
    // Per-session FIFO order: a directory delete sent from now on sees ours done.
    const swept = [...new Set(removals.map(({ dir }) => dir))].map((dir) => this.ctx.sweeper.released(session, dir));
    runs.forEach((run, i) => {
      const outcome = sending[i].then(
        async () => {
          // eslint-disable-next-line @typescript-eslint/await-thenable -- some entries are plain values, on purpose
          await Promise.all(swept);
        },
        // All or nothing: a node already gone fails the whole multi, and a lost reply leaves
        // it unknown; single deletes finish either way (a node gone is fine for them).
        () => Promise.all(run.map(alone)).then(() => undefined),
      );
      for (const removal of run) removal.done(outcome);
    });
  }
}
