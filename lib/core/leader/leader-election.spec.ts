import { InvalidOptionError } from '../errors/invalid-option.error.js';
import { LockAbortedError } from '../errors/lock-aborted.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import { LockLostError } from '../errors/lock-lost.error.js';
import type { AcquireOptions, LockBackend, LockHandle } from '../recipe/lock-backend.interface.js';
import { InvalidLeaderGroupError } from './invalid-leader-group.error.js';
import { LeaderElection, type LeadershipChange } from './leader-election.js';

// The election's rules against a scripted backend; its behaviour on ZooKeeper is tested
// in test/core/leader-election.spec.ts.

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
  async contenders() {
    return [];
  }
  async requestRevocation(): Promise<number> {
    return 0;
  }
  async locks() {
    return [];
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
