import type { LockHandle } from '../../lib/core/port/lock-backend.js';
import { counts, type OursSessions } from './bench-impl.js';
import type { CapacitySession } from './capacity-sessions.js';

/**
 * Scenario 10's session for ours: a client of its own on `server`, `acquire(name)` then
 * `release()` with the default options (the release answers once its delete is sent).
 */
export async function oursCapacitySession(
  sessions: OursSessions,
  server: string,
  name: string,
): Promise<CapacitySession> {
  const backend = await sessions.open(server);
  let last: LockHandle | undefined;
  return {
    cycle: (done) => {
      backend
        .acquire(name)
        .then((handle) => {
          last = handle;
          return handle.release();
        })
        .then(
          () => done(null),
          (error: Error) => done(error),
        );
    },
    counts: () => counts(backend),
    settled: async () => {
      await last?.releaseConfirmed;
    },
    close: () => sessions.close(backend),
  };
}
