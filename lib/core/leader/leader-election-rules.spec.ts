import {
  InvalidOptionError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  InvalidLeaderGroupError,
} from '../errors/errors.js';
import type { AcquireOptions, LeaseHandle, LockBackend, LockHandle, MultiLockHandle } from '../port/lock-backend.js';
import type { GroupEntry, Unwatch } from '../port/group.js';
import { LeaderElection, type LeadershipChange } from './leader-election.js';

// The election's rules against a scripted backend; its behaviour on ZooKeeper is tested
// in test/core/leader-election-zookeeper.spec.ts.

interface ScriptedHandle extends LockHandle {
  lose(reason: Error): void;
}

function handle(name: string, token: bigint, log: string[]): ScriptedHandle {
  const lost = new AbortController();
  let released = false;
  return {
    name,
    mode: 'write',
    fencingToken: token,
    signal: lost.signal,
    revocation: new AbortController().signal,
    get released() {
      return released;
    },
    isHeld: () => !released && !lost.signal.aborted,
    assertHeld: () => undefined,
    release: async () => {
      released = true;
      log.push('released');
    },
    releaseConfirmed: Promise.resolve(),
    [Symbol.asyncDispose]: async () => undefined,
    lose: (reason) => lost.abort(reason),
  };
}

/** Each acquire takes the next scripted step: a handle, an error, or a wait until aborted. */
class ScriptedBackend implements LockBackend {
  readonly calls: string[] = [];
  readonly log: string[] = [];
  constructor(readonly steps: Array<ScriptedHandle | Error | 'wait'> = []) {}
  async start(): Promise<void> {}
  async acquire(name: string, options?: AcquireOptions): Promise<LockHandle> {
    this.calls.push(name);
    const step = this.steps.shift() ?? 'wait';
    if (step instanceof Error) throw step;
    if (step !== 'wait') return step;
    const signal = options!.signal!;
    return new Promise((_, reject) =>
      signal.addEventListener('abort', () => reject(new LockAbortedError(name, signal.reason)), { once: true }),
    );
  }
  tryAcquire(): Promise<LockHandle | null> {
    throw new Error('not used');
  }
  acquireAll(): Promise<MultiLockHandle> {
    throw new Error('not used');
  }
  acquireLease(): Promise<LeaseHandle> {
    throw new Error('not used');
  }
  async leaseContenders() {
    return [];
  }
  async contenders() {
    return [];
  }
  async requestRevocation(): Promise<number> {
    return 0;
  }
  async locks() {
    return [];
  }
  async readRecord() {
    return null;
  }
  async writeRecord(): Promise<boolean> {
    throw new Error('not used');
  }
  async serverTime(): Promise<number> {
    throw new Error('not used');
  }
  async releasesConfirmed(): Promise<void> {}
  joinGroup(): Promise<GroupEntry> {
    throw new Error('not used');
  }
  async groupMembers() {
    return [];
  }
  async watch(): Promise<Unwatch> {
    return () => undefined;
  }
  async cancelWaits(): Promise<void> {}
  async close(): Promise<void> {}
}

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
};

const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((r) => setImmediate(r));
};

describe('LeaderElection (scripted backend)', () => {
  it.each<[string, unknown]>([
    ['empty', ''],
    ['not a string', 42],
    ['a lone surrogate', 'a\ud800'],
    ['too long', 'g'.repeat(1100)],
  ])('refuses a group that is %s, naming it, before using the backend', (_, group) => {
    const backend = new ScriptedBackend();
    const error = thrown(() => new LeaderElection(backend, group as string));
    expect(error).toBeInstanceOf(InvalidLeaderGroupError);
    expect((error as Error).message).toMatch(/^Invalid leader group /);
    expect((error as InvalidLeaderGroupError).group).toBe(group);
    expect(backend.calls).toEqual([]);
  });

  it.each([-1, Number.NaN, Infinity, '5'])('refuses retryDelayMs=%p', (retryDelayMs) => {
    expect(() => new LeaderElection(new ScriptedBackend(), 'g', { retryDelayMs: retryDelayMs as number })).toThrow(
      InvalidOptionError,
    );
  });

  it('retries a failed attempt after the delay, then leads', async () => {
    const backend = new ScriptedBackend([new Error('connection loss'), new Error('again')]);
    backend.steps.push(handle('leader:g', 7n, backend.log));
    const election = new LeaderElection(backend, 'g', { retryDelayMs: 10 });
    const changes: LeadershipChange[] = [];
    election.onChange((change) => changes.push(change));
    election.start();
    election.start(); // idempotent
    await until(() => election.isLeader);
    expect(backend.calls).toEqual(['leader:g', 'leader:g', 'leader:g']);
    expect(changes).toEqual([{ group: 'g', leading: true }]);
    expect(election.fencingToken).toBe(7n);
    await election.stop();
    expect(election.isLeader).toBe(false);
  });

  it('stop() cancels a pending retry at once (no timer left behind)', async () => {
    const backend = new ScriptedBackend([new Error('not connected')]);
    const election = new LeaderElection(backend, 'g', { retryDelayMs: 60_000 });
    election.start();
    await until(() => backend.calls.length === 1);
    const started = performance.now();
    await election.stop();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(backend.calls).toHaveLength(1);
  });

  it('ends quietly when the backend is closed, without retrying', async () => {
    const backend = new ScriptedBackend([new LockClientClosedError()]);
    const election = new LeaderElection(backend, 'g', { retryDelayMs: 0 });
    election.start();
    await until(() => backend.calls.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(backend.calls).toHaveLength(1);
    await election.stop();
  });

  it('a lost lock: told first, released, then queues again', async () => {
    const backend = new ScriptedBackend();
    const first = handle('leader:g', 1n, backend.log);
    backend.steps.push(first);
    const election = new LeaderElection(backend, 'g');
    const changes: LeadershipChange[] = [];
    election.onChange((change) => {
      changes.push(change);
      backend.log.push(`leading:${change.leading}`);
    });
    election.start();
    await until(() => election.isLeader);
    const signal = election.signal!;
    const lost = new LockLostError('leader:g', 'session expired');
    first.lose(lost);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(lost);
    expect(election.isLeader).toBe(false);
    expect(election.signal).toBeUndefined();
    expect(changes[1]).toEqual({ group: 'g', leading: false, reason: lost });
    await until(() => backend.calls.length === 2); // queued again
    expect(backend.log).toEqual(['leading:true', 'leading:false', 'released']);
    await election.stop();
    expect(changes).toHaveLength(2); // a waiting candidate that stops is told nothing
  });

  it('stop() of a leader: its signal aborts and listeners are told before the release', async () => {
    const backend = new ScriptedBackend();
    backend.steps.push(handle('leader:g', 1n, backend.log));
    const election = new LeaderElection(backend, 'g');
    election.onChange(({ leading, reason }) => backend.log.push(`leading:${leading}:${reason?.name ?? ''}`));
    election.start();
    await until(() => election.isLeader);
    const signal = election.signal!;
    signal.addEventListener('abort', () => backend.log.push('signal'));
    await Promise.all([election.stop(), election.stop()]);
    expect(backend.log).toEqual(['leading:true:', 'signal', 'leading:false:LockLostError', 'released']);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as Error).message).toMatch(/stepped down from leading group "g"/);
  });

  it('a listener that throws neither stops the election nor the other listeners', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const backend = new ScriptedBackend();
      backend.steps.push(handle('leader:g', 1n, backend.log));
      const election = new LeaderElection(backend, 'g');
      const seen: boolean[] = [];
      election.onChange(() => {
        throw new Error('listener bug');
      });
      const unsubscribe = election.onChange(({ leading }) => seen.push(leading));
      election.start();
      await until(() => election.isLeader);
      expect(seen).toEqual([true]);
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/listener of group "g" threw \(listener bug\)/),
        expect.anything(),
      );
      unsubscribe();
      await election.stop();
      expect(seen).toEqual([true]);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('LeaderElection.runAsLeader, term and stop({ graceMs })', () => {
  /** An election of group "g" leading on `first`, then on the handles of `next` in turn. */
  async function leading(first: ScriptedHandle, backend = new ScriptedBackend()) {
    backend.steps.push(first);
    const election = new LeaderElection(backend, 'g');
    election.start();
    await until(() => election.isLeader);
    return { election, backend };
  }

  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  }

  it('runs nothing and returns undefined when not leading, or once stop() began', async () => {
    const backend = new ScriptedBackend();
    const election = new LeaderElection(backend, 'g');
    const fn = jest.fn();
    expect(election.runAsLeader(fn)).toBeUndefined();
    expect(election.term).toBeUndefined();
    backend.steps.push(handle('leader:g', 1n, backend.log));
    election.start();
    await until(() => election.isLeader);
    const stopping = election.stop({ graceMs: 1000 });
    expect(election.runAsLeader(fn)).toBeUndefined();
    await stopping;
    expect(fn).not.toHaveBeenCalled();
  });

  it('runs nothing when the lock is lost by the clock, before its signal was read', async () => {
    const backend = new ScriptedBackend();
    const lock = handle('leader:g', 1n, backend.log);
    const { election } = await leading(lock, backend);
    let expired = false;
    const isHeld = lock.isHeld;
    // What a ZooKeeper handle does: isHeld() checks the deadline, and aborts the signal past it.
    (lock as { isHeld: () => boolean }).isHeld = () => {
      if (expired && !lock.signal.aborted) lock.lose(new LockLostError('leader:g', 'deadline passed'));
      return isHeld();
    };
    expired = true;
    const fn = jest.fn();
    expect(election.runAsLeader(fn)).toBeUndefined();
    expect(fn).not.toHaveBeenCalled();
    await election.stop();
  });

  it('term: one object per term, with its token; inside the work, the term it started under', async () => {
    const backend = new ScriptedBackend();
    const first = handle('leader:g', 5n, backend.log);
    const { election } = await leading(first, backend);
    const term = election.term!;
    expect(term).toBe(election.term);
    expect(term).toMatchObject({ group: 'g', fencingToken: 5n, isLeading: true });
    expect(election.signal).toBe(term.signal);
    const inside = gate();
    const seen: unknown[] = [];
    const run = election.runAsLeader(
      async (given) => {
        seen.push(given === term, election.term === term);
        await inside.opened;
        seen.push(election.term === term, election.fencingToken, election.signal?.aborted);
        return 'done';
      },
      { onLockLost: 'ignore' },
    )!;
    const lost = new LockLostError('leader:g', 'session expired');
    first.lose(lost);
    backend.steps.push(handle('leader:g', 9n, backend.log));
    await until(() => election.isLeader); // a new term began while the work runs
    expect(election.term).not.toBe(term);
    expect(election.term!.fencingToken).toBe(9n);
    inside.open();
    await expect(run).resolves.toBe('done');
    expect(seen).toEqual([true, true, true, 5n, true]);
    expect(() => term.assertLeading()).toThrow(lost);
    await election.stop();
  });

  it('a term lost while the work runs: rejects with its LockLostError once the work settles; onLost told once', async () => {
    const backend = new ScriptedBackend();
    const first = handle('leader:g', 1n, backend.log);
    const { election } = await leading(first, backend);
    const inside = gate();
    const onLost = jest.fn();
    let settled = false;
    const run = election.runAsLeader(
      async () => {
        await inside.opened;
        settled = true;
        return 'result';
      },
      { onLost },
    )!;
    const lost = new LockLostError('leader:g', 'session expired');
    first.lose(lost);
    expect(onLost).toHaveBeenCalledWith(lost, false);
    const outcome = run.then(
      () => 'resolved',
      (error: unknown) => (settled ? error : 'rejected before the work settled'),
    );
    await new Promise((r) => setTimeout(r, 20));
    inside.open();
    expect(await outcome).toBe(lost);
    expect(onLost).toHaveBeenCalledTimes(1);
    await election.stop();
  });

  it("onLockLost: 'ignore' keeps the result (and onLost hears ignored: true); a throwing work keeps its own error", async () => {
    const backend = new ScriptedBackend();
    const first = handle('leader:g', 1n, backend.log);
    const { election } = await leading(first, backend);
    const onLost = jest.fn();
    const inside = gate();
    const kept = election.runAsLeader(
      async () => {
        await inside.opened;
        return 'kept';
      },
      { onLockLost: 'ignore', onLost },
    )!;
    const own = new Error('own failure');
    const failing = election.runAsLeader(async () => {
      await inside.opened;
      throw own;
    })!;
    first.lose(new LockLostError('leader:g', 'session expired'));
    inside.open();
    await expect(kept).resolves.toBe('kept');
    await expect(failing).rejects.toBe(own);
    expect(onLost).toHaveBeenCalledWith(expect.any(LockLostError), true);
    await election.stop();
  });

  it.each([60_000, 2 ** 31, Infinity])(
    'stop({ graceMs: %p }) waits for the work under way, then the signal aborts, then the lock is released',
    async (graceMs) => {
      const backend = new ScriptedBackend();
      const { election } = await leading(handle('leader:g', 1n, backend.log), backend);
      const inside = gate();
      const signal = election.signal!;
      signal.addEventListener('abort', () => backend.log.push('signal'));
      const run = election.runAsLeader(async () => {
        await inside.opened;
        backend.log.push('work ended');
        return 'done';
      })!;
      const stopped = election.stop({ graceMs }).then(() => backend.log.push('stopped'));
      await new Promise((r) => setTimeout(r, 30));
      expect(backend.log).toEqual([]); // still leading: the work runs
      expect(election.isLeader).toBe(true);
      inside.open();
      await stopped;
      await expect(run).resolves.toBe('done');
      expect(backend.log).toEqual(['work ended', 'signal', 'released', 'stopped']);
    },
  );

  it('stop({ graceMs }) past the grace steps down anyway; the work then rejects with the step-down', async () => {
    const backend = new ScriptedBackend();
    const { election } = await leading(handle('leader:g', 1n, backend.log), backend);
    const inside = gate();
    const run = election.runAsLeader(async () => {
      await inside.opened;
      return 'late';
    })!;
    await election.stop({ graceMs: 20 });
    expect(backend.log).toEqual(['released']);
    inside.open();
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as Error).message).toMatch(/stepped down from leading group "g"/);
  });

  it.each<[string, unknown]>([
    ['onLockLost: "maybe"', { onLockLost: 'maybe' }],
    ['an unknown key', { onLockLots: 'ignore' }],
    ['onLost not a function', { onLost: 'log' }],
    ['options not an object', 'ignore'],
  ])('refuses %s with InvalidOptionError, running nothing', async (_, options) => {
    const backend = new ScriptedBackend();
    const { election } = await leading(handle('leader:g', 1n, backend.log), backend);
    const fn = jest.fn();
    expect(() => election.runAsLeader(fn, options as never)).toThrow(InvalidOptionError);
    expect(fn).not.toHaveBeenCalled();
    expect(() => election.stop({ graceMs: -1 })).toThrow(InvalidOptionError);
    expect(() => election.stop({ graceMs: Number.NaN })).toThrow(InvalidOptionError);
    await election.stop();
  });
});
