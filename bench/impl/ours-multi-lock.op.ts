import { runInTurns } from '../support/variant-turns.js';
import type { MultiLockParams, MultiLockResult, MultiLockVariant } from '../workers/recipe-ops.protocol.js';
import { counts, range, type OursSessions } from './bench-impl.js';

/**
 * Scenario 7 for this library, on one session: `acquireAll` of `locks` free names, one
 * name, and the same number of names acquired one after another (released in reverse
 * order, as Curator's InterProcessMultiLock and a Kazoo user do), in turns.
 */
export async function oursMultiLock(
  sessions: OursSessions,
  { prefix, locks, cycles, warmup }: MultiLockParams,
): Promise<MultiLockResult> {
  const backend = await sessions.open();
  try {
    const names = (variant: string): string[] => range(locks).map((i) => `${prefix}-${variant}-${i}`);
    const [all, seq, one] = [names('all'), names('seq'), `${prefix}-one`];
    const variants: Record<MultiLockVariant, () => Promise<void>> = {
      all: async () => (await backend.acquireAll(all)).release(),
      seq: async () => {
        const held = [];
        for (const name of seq) held.push(await backend.acquire(name));
        for (const handle of held.reverse()) await handle.release();
      },
      one: async () => (await backend.acquire(one)).release(),
    };
    return { variants: await runInTurns(variants, cycles, warmup, () => counts(backend)) };
  } finally {
    await sessions.close(backend);
  }
}
