import type { NodeFormat } from '../port/lock-backend.js';
import { LockClientClosedError } from '../errors/errors.js';
import type { ZkLeaseHandle } from './queue/zk-lease-handle.js';
import { nodeFormatFor } from '../port/node-format.js';
import { RevocationWatch } from './revocation-watch.js';
import type { ResolvedAcquireOptions } from '../port/options.js';
import { LockAcquisition, type AcquisitionContext, type SentCreate } from './queue/acquisition.js';
import { ZkLockHandle } from './queue/zk-lock-handle.js';

/** What `LockRunner` shares with its backend. */
export interface LockRunnerContext extends AcquisitionContext {
  /** Waits under way, so that shutdown can cancel them. */
  readonly waits: Map<{ cancel(reason: unknown): void }, Promise<unknown>>;
  /** Locks and leases held, so that shutdown can release them. */
  readonly held: Set<ZkLockHandle | ZkLeaseHandle>;
  /** The backend's default node format. */
  readonly nodeFormat: NodeFormat;
  /** Connects on first use of a backend made unconnected. */
  startedOnce(): Promise<void>;
}

/** One acquire of a `ZkLockBackend`: the acquisition, tracked while it waits, and its grant as a handle. */
export class LockRunner {
  constructor(private readonly ctx: LockRunnerContext) {}

  /** The handle, or `null` when the lock was not free before `timeoutMs`: 0 is a try. */
  async run(
    name: string,
    dir: string,
    options: ResolvedAcquireOptions,
    sent?: SentCreate,
  ): Promise<ZkLockHandle | null> {
    const { client, waits, held, reaper } = this.ctx;
    if (!client.isStarted) await this.ctx.startedOnce(); // no extra turn of the event loop once started
    if (client.isClosed) throw new LockClientClosedError();
    const nodeFormat = nodeFormatFor(options.mode, options.nodeFormat, this.ctx.nodeFormat);
    const acquisition = new LockAcquisition(this.ctx, { name, dir, ...options, nodeFormat, sent });
    const running = acquisition.run();
    waits.set(acquisition, running);
    try {
      const grant = await running;
      if (!grant) return null;
      // Checked against the clock now, not only by a timer: a grant that comes back to an
      // event loop blocked past the session's deadline is born lost.
      grant.session.checkTrust();
      const revocation = options.revocable
        ? new RevocationWatch(grant.session, `${dir}/${grant.node}`, name)
        : undefined;
      const handle = new ZkLockHandle({
        name,
        mode: options.mode,
        ...grant,
        dir,
        reaper,
        onReleased: (released) => held.delete(released),
        revocation,
      });
      held.add(handle);
      // The watch is set when the acquire resolves, unless the connection dropped meanwhile
      // (it is set on reconnect then): a lock is never held up by a revocation watch.
      if (revocation) await grant.session.whileConnected(revocation.armed);
      return handle;
    } finally {
      waits.delete(acquisition);
    }
  }
}
