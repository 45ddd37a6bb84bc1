import 'reflect-metadata';
import { Injectable, Logger, type INestApplication } from '@nestjs/common';

import { LockClientClosedError, LockService, WithLock } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { backendOf, lockNodes, startApp } from './nest-fixture';

@Injectable()
class Ticks {
  ran = 0;

  @WithLock('tick', { ifLocked: 'skip', timeoutMs: 60_000 })
  async skipping(): Promise<void> {
    this.ran++;
  }

  @WithLock('tick', { timeoutMs: 60_000 })
  async waiting(): Promise<void> {
    this.ran++;
  }
}

describe('application shutdown', () => {
  const root = uniqueRoot('nest-shutdown');

  it("while calls wait: an ifLocked 'skip' call resolves quietly, a waiting one fails saying the application is shutting down", async () => {
    const a: INestApplication = await startApp({ providers: [Ticks] }, {}, root);
    const b: INestApplication = await startApp({}, {}, root);
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const held = await b.get(LockService).acquire('tick');
      const ticks = a.get(Ticks);
      const skipping = ticks.skipping();
      const waiting = ticks.waiting().catch((e: unknown) => e);
      await waitUntil(async () => (await lockNodes(b, 'tick'))?.length === 3, 'both calls queue behind B');
      await a.close();
      await expect(skipping).resolves.toBeUndefined();
      const error = await waiting;
      expect(error).toBeInstanceOf(LockClientClosedError);
      expect((error as Error).message).toMatch(
        /^Lock "tick" was not acquired: this lock client is shutting down \(in Nest: the application is stopping\)/,
      );
      expect(ticks.ran).toBe(0);
      expect(errors).not.toHaveBeenCalled();
      expect(await lockNodes(b, 'tick')).toHaveLength(1);
      await held.release();
    } finally {
      errors.mockRestore();
      await a.close();
      await b.close();
    }
  });

  it('hands held locks to other instances at once, fails waits, and closes the session', async () => {
    const a: INestApplication = await startApp({}, { sessionTimeoutMs: 20_000 }, root);
    const b: INestApplication = await startApp({}, {}, root);
    try {
      const locksA = a.get(LockService);
      await locksA.acquire('job'); // held by instance A, never released by hand
      const heldByB = await b.get(LockService).acquire('other-job-wait');
      const waitingInA = locksA.acquire('other-job-wait', { timeoutMs: 60_000 }).catch((e: unknown) => e);
      const bWaits = b.get(LockService).acquire('job', { timeoutMs: 60_000 });
      await waitUntil(async () => (await lockNodes(b, 'job'))?.length === 2, 'B queues behind A');
      await waitUntil(async () => (await lockNodes(b, 'other-job-wait'))?.length === 2, 'A queues behind B');

      await a.close();
      // A's node is gone the moment close() returns: not left to a session timeout.
      expect(await lockNodes(b, 'job')).toHaveLength(1);

      expect(await waitingInA).toBeInstanceOf(LockClientClosedError);
      const got = await bWaits; // handed on now, not after A's 20 s session timeout
      expect(await lockNodes(b, 'job')).toHaveLength(1);
      expect(backendOf(a).client.isClosed).toBe(true);
      expect(backendOf(a).client.session.isLost).toBe(true);
      await Promise.all([got.release(), heldByB.release()]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
