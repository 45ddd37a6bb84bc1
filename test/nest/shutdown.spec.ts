import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';

import { LockClientClosedError, LockService } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { backendOf, lockNodes, startApp } from './nest-fixture';

describe('application shutdown', () => {
  const root = uniqueRoot('nest-shutdown');

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
