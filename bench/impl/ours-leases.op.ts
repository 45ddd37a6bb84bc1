import { setTimeout as sleep } from 'node:timers/promises';

import { GrantWindow } from '../support/grant-window.js';
import type { LeasesParams, LeasesResult } from '../workers/recipe-ops.protocol.js';
import { counts, range, type OursSessions } from './bench-impl.js';

/**
 * Scenario 8 for this library: `contenders` sessions, each looping `acquireLease` → hold
 * `holdMs` → `release()` on one semaphore, until the grant window closes (see GrantWindow).
 */
export async function oursLeases(sessions: OursSessions, p: LeasesParams): Promise<LeasesResult> {
  const backends = await Promise.all(range(p.contenders).map(() => sessions.open()));
  try {
    const window = new GrantWindow(() => backends.map(counts), p.warmupGrants, p.grants);
    const loops = backends.map(async (backend) => {
      try {
        while (!window.stopped) {
          const lease = await backend.acquireLease(p.name, { maxLeases: p.maxLeases });
          window.onGrant();
          await sleep(p.holdMs);
          window.onRelease();
          await lease.release();
        }
      } catch (error) {
        window.close(); // the others stop too; the error is what the run reports
        throw error;
      }
    });
    if (p.durationMs !== undefined) {
      const failed = Promise.allSettled(loops);
      await Promise.race([window.opened, failed]);
      await Promise.race([sleep(p.durationMs), failed]);
      window.close();
    }
    await Promise.all(loops);
    return window.result();
  } finally {
    await Promise.allSettled(backends.map((backend) => sessions.close(backend)));
  }
}
