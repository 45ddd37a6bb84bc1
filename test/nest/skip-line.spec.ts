import { Logger } from '@nestjs/common';

import { LockUnavailableError, ReentrantLocker } from '../../lib/index';
import { lockLogEvents } from '../../lib/nest/lock-log.listener';
import { ZkLockLogger } from '../../lib/nest/lock-logger';
import { LockFixture } from '../support/lock-fixture';

/**
 * The verbose line of a call skipped with `ifLocked: 'skip'` names why: a tick skipped
 * because of this instance's own `holdAtLeastMs` hold says so, instead of sending the
 * reader after "another holder" that does not exist.
 */
describe('the skip line', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('skip-line')));
  afterAll(() => fx.cleanup());

  it("says 'held by this instance's own hold' for this instance's kept hold, 'another holder' on the other instance", async () => {
    const [mine, other] = await fx.many(2);
    const verbose = jest.spyOn(Logger.prototype, 'verbose').mockImplementation(() => undefined);
    try {
      const here = new ReentrantLocker(mine, 10_000, lockLogEvents(new ZkLockLogger()));
      const there = new ReentrantLocker(other, 10_000, lockLogEvents(new ZkLockLogger()));
      const tick = jest.fn(() => 'ran');
      await expect(here.withLock('tick', tick, { holdAtLeastMs: 60_000 })).resolves.toBe('ran');
      // The hold is kept in the job's record; no lock node is left in ZooKeeper.
      expect((await fx.nodes('tick')) ?? []).toEqual([]);

      await expect(here.withLock('tick', tick, { ifLocked: 'skip', holdAtLeastMs: 60_000 })).resolves.toBeUndefined();
      await expect(there.withLock('tick', tick, { ifLocked: 'skip', holdAtLeastMs: 60_000 })).resolves.toBeUndefined();
      expect(tick).toHaveBeenCalledTimes(1);
      expect(verbose.mock.calls.map(([line]) => line)).toEqual([
        `Skipped a call under lock "tick" (write, ifLocked: 'skip'): held by this instance's own hold (the holdAtLeastMs of its last run here).`,
        `Skipped a call under lock "tick" (write, ifLocked: 'skip'): another holder has it.`,
      ]);
    } finally {
      verbose.mockRestore();
    }
  });

  it('says so for a multi-lock whose hold this instance keeps in the process', async () => {
    const [mine] = await fx.many(1);
    const verbose = jest.spyOn(Logger.prototype, 'verbose').mockImplementation(() => undefined);
    try {
      const here = new ReentrantLocker(mine, 10_000, lockLogEvents(new ZkLockLogger()));
      await here.withLocks(['a', 'b'], () => undefined, { holdAtLeastMs: 60_000 });
      // withLocks keeps its hold by keeping its nodes, in this process.
      expect(await fx.nodes('b')).toHaveLength(1);
      await expect(here.withLock('b', () => 'ran', { ifLocked: 'skip' })).resolves.toBeUndefined();
      expect(verbose.mock.calls.map(([line]) => line)).toEqual([
        `Skipped a call under lock "b" (write, ifLocked: 'skip'): held by this instance's own hold (the holdAtLeastMs of its last run here).`,
      ]);
      await here.drain(0); // releases the kept group
      await mine.releasesConfirmed();
      expect((await fx.nodes('b')) ?? []).toEqual([]);
    } finally {
      verbose.mockRestore();
    }
  });

  it('the once-per-outage warning says "never connected" for a client whose first connect is under way', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const verbose = jest.spyOn(Logger.prototype, 'verbose').mockImplementation(() => undefined);
    try {
      const error = new LockUnavailableError('lock "tick" (write)', 'disconnected', 1032, Date.now(), true);
      lockLogEvents(new ZkLockLogger()).skipped!({ name: 'tick', mode: 'write', reason: 'unavailable', error });
      expect(warn.mock.calls.map(([line]) => line)).toEqual([
        `Skipping calls with ifLocked: 'skip' while no ZooKeeper session is connected (first: lock "tick", this client has never connected (trying for 1032 ms)); said once per outage.`,
      ]);
    } finally {
      warn.mockRestore();
      verbose.mockRestore();
    }
  });
});
