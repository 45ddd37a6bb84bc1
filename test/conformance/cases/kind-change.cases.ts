import { LeaseLimitMismatchError, LockKindMismatchError, type LockBackend } from '../../../lib/index';
import { queued, rejectionOf } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';
import { waitUntil } from '../../support/wait-until';

/** What one step of a sequence takes: a lock in a mode, or a lease of a count. */
type Step = { readonly lock: 'read' | 'write' } | { readonly lease: number };

const STEPS: Step[] = [
  { lease: 2 },
  { lock: 'write' },
  { lease: 3 },
  { lease: 1 },
  { lock: 'read' },
  { lease: 2 },
  { lease: 2 },
  { lock: 'write' },
  { lock: 'write' },
  { lease: 3 },
];

const leaseWaiters = (backend: LockBackend, name: string, count: number): Promise<void> =>
  waitUntil(async () => (await backend.leaseContenders(name)).length === count, `${count} lease contenders`);

/**
 * A name is a lock or a lease semaphore of one count at a time, and changes (kind or count)
 * only once nobody holds or awaits it: at once, by any client, also one that knew the name
 * as the other kind. Run on every backend, with clients that keep an idle name's state in
 * place (ZooKeeper: its directory), so that a change meets what the name was.
 */
export function kindChangeCases(ctx: ConformanceContext): void {
  it('a name nobody holds or awaits changes kind and count, in any order, for any client', async () => {
    const name = ctx.name('kinds');
    const clients = await ctx.world.keepingIdleNames(2);
    for (const [i, step] of STEPS.entries()) {
      const client = clients[i % 2];
      if ('lease' in step) {
        const lease = await client.acquireLease(name, { maxLeases: step.lease, timeoutMs: 10_000 });
        expect(await clients[1 - (i % 2)].leaseContenders(name)).toEqual([expect.objectContaining({ holding: true })]);
        expect(lease.maxLeases).toBe(step.lease);
        await lease.release();
        await lease.releaseConfirmed; // the other client finds the name idle once the delete is confirmed
      } else {
        const lock = await client.acquire(name, { mode: step.lock, timeoutMs: 10_000 });
        expect((await clients[1 - (i % 2)].contenders(name)).map((c) => [c.mode, c.holding])).toEqual([
          [step.lock, true],
        ]);
        await lock.release();
        await lock.releaseConfirmed;
      }
    }
  });

  it('while a semaphore is held or awaited, a lock and another count are refused, and leave nothing', async () => {
    const name = ctx.name('lease-busy');
    const [a, b] = await ctx.world.keepingIdleNames(2);
    const holders = [await a.acquireLease(name, { maxLeases: 2 }), await a.acquireLease(name, { maxLeases: 2 })];
    const waiting = a.acquireLease(name, { maxLeases: 2, timeoutMs: 20_000 });
    await leaseWaiters(a, name, 3);
    const refusals = async (): Promise<void> => {
      for (const call of [() => b.acquire(name, { timeoutMs: 10_000 }), () => b.tryAcquire(name)]) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(LockKindMismatchError);
        expect(error).toMatchObject({ requested: 'lock', found: 'lease', maxLeases: 2 });
        expect((error as Error).message).toContain('while it is held or awaited');
      }
      const error = await rejectionOf(b.acquireLease(name, { maxLeases: 3, timeoutMs: 10_000 }));
      expect(error).toBeInstanceOf(LeaseLimitMismatchError);
      expect(error).toMatchObject({ requested: 3, stored: 2 });
      expect((error as Error).message).toContain('while it is held or awaited with maxLeases 2');
    };
    await refusals();
    expect(await b.leaseContenders(name)).toHaveLength(3);
    await holders[0].release();
    const third = await waiting;
    await refusals(); // held by two, awaited by none
    await holders[1].release();
    await refusals(); // held by one
    await third.release();
    await third.releaseConfirmed; // b changes the count on its own connection
    await (await b.acquireLease(name, { maxLeases: 3 })).release();
  });

  it('while a lock is held or awaited, a lease is refused, and leaves nothing', async () => {
    const name = ctx.name('lock-busy');
    const [a, b] = await ctx.world.keepingIdleNames(2);
    const reader = await a.acquire(name, { mode: 'read' });
    const writer = a.acquire(name, { timeoutMs: 20_000 });
    await queued(a, name, 2);
    const refusal = async (): Promise<void> => {
      const error = await rejectionOf(b.acquireLease(name, { maxLeases: 2, timeoutMs: 10_000 }));
      expect(error).toBeInstanceOf(LockKindMismatchError);
      expect(error).toMatchObject({ requested: 'lease', found: 'lock' });
      expect((error as Error).message).toContain('while it is held or awaited as a lock');
      await expect(b.leaseContenders(name)).rejects.toBeInstanceOf(LockKindMismatchError);
    };
    await refusal();
    expect(await b.contenders(name)).toHaveLength(2);
    await reader.release();
    const held = await writer;
    await refusal();
    await held.release();
    await held.releaseConfirmed; // b changes the kind on its own connection
    await (await b.acquireLease(name, { maxLeases: 1 })).release();
  });
}
