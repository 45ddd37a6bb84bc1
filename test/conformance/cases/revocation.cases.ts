import {
  InvalidLockNameError,
  InvalidOptionError,
  LockClientClosedError,
  LockRevocationRequestedError,
  ReentrantLocker,
  type LockHandle,
} from '../../../lib/index';
import { LockKindMismatchError } from '../../../lib/core/errors/errors';
import { revocationOptInOf } from '../../../lib/core/port/node-format';
import { waitUntil } from '../../support/wait-until';
import { queued, rejectionOf, track, turns } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

const revoked = (lock: LockHandle): Promise<void> =>
  waitUntil(() => lock.revocation.aborted, `${lock.name}'s revocation to abort`);

/** `[mode, holding, asked]` of each contender: asked when its identity reads `__REVOKE__`. */
const asked = async (
  backend: { contenders(name: string): Promise<Array<{ mode: string; holding: boolean; identity: string | null }>> },
  name: string,
) => (await backend.contenders(name)).map((c) => [c.mode, c.holding, c.identity === '__REVOKE__']);

export function revocationCases(ctx: ConformanceContext): void {
  it('a revocable holder is asked: revocation aborts with LockRevocationRequestedError, and it still holds until it releases', async () => {
    const name = ctx.name('revoke');
    const [a, b] = await ctx.world.backends(2);
    const lock = await a.acquire(name, { revocable: true });
    expect(lock.revocation.aborted).toBe(false);
    const next = track(b.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 2);

    await expect(b.requestRevocation(name)).resolves.toBe(1);
    await revoked(lock);
    expect(lock.revocation.reason).toBeInstanceOf(LockRevocationRequestedError);
    expect(lock.revocation.reason).toMatchObject({ code: 'LOCK_REVOCATION_REQUESTED', lockName: name });
    expect(lock.isHeld()).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    await turns();
    expect(next.granted()).toBe(false);
    expect(await asked(b, name)).toEqual([
      ['write', true, true],
      ['write', false, false],
    ]);

    await lock.release();
    const granted = await next.result;
    expect(granted.revocation.aborted).toBe(false);
    await granted.release();
  });

  it('a holder that is not revocable is counted but never told: its revocation never aborts, its identity reads __REVOKE__', async () => {
    const name = ctx.name('not-revocable');
    const [a, b] = await ctx.world.backends(2);
    const plain = await a.acquire(name, { mode: 'read' });
    const control = await b.acquire(name, { mode: 'read', revocable: true });
    await expect(b.requestRevocation(name)).resolves.toBe(2);
    await revoked(control);
    await turns();
    expect(plain.revocation.aborted).toBe(false);
    expect(plain.isHeld()).toBe(true);
    expect(await asked(a, name)).toEqual([
      ['read', true, true],
      ['read', true, true],
    ]);
    await Promise.all([plain.release(), control.release()]);
  });

  it("a holder's node name says whether it opted in (revocable: true), in every node format", async () => {
    const name = ctx.name('opt-in');
    const [a, b, c] = await ctx.world.backends(3);
    const plain = await a.acquire(name, { mode: 'read' });
    const revocable = await b.acquire(name, { mode: 'read', revocable: true, nodeFormat: 'curator-rw' });
    const waiting = track(c.acquire(name, { revocable: true }));
    await queued(a, name, 3);
    expect((await a.contenders(name)).map((contender) => revocationOptInOf(contender.node))).toEqual([
      'not-revocable',
      'revocable',
      'revocable',
    ]);
    await Promise.all([plain.release(), revocable.release()]);
    await (await waiting.result).release();
  });

  it('asks holders only: 0 for a free lock, every reader holding, no waiter', async () => {
    const name = ctx.name('holders-only');
    const [a, b, c, d] = await ctx.world.backends(4);
    await expect(a.requestRevocation(name)).resolves.toBe(0);
    expect(await a.contenders(name)).toEqual([]);

    const readers = [
      await a.acquire(name, { mode: 'read', revocable: true }),
      await b.acquire(name, { mode: 'read', revocable: true }),
    ];
    const writer = track(c.acquire(name, { revocable: true, timeoutMs: 10_000 }));
    await queued(a, name, 3);
    await expect(d.requestRevocation(name)).resolves.toBe(2);
    await Promise.all(readers.map(revoked));
    expect(await asked(d, name)).toEqual([
      ['read', true, true],
      ['read', true, true],
      ['write', false, false],
    ]);

    await Promise.all(readers.map((lock) => lock.release()));
    const w = await writer.result;
    await turns();
    expect(w.revocation.aborted).toBe(false); // it waited when the holders were asked
    await w.release();
    await expect(d.requestRevocation(name)).resolves.toBe(0);
  });

  it('a released holder is not asked again, and a new grant starts unasked', async () => {
    const name = ctx.name('after-release');
    const [a, b] = await ctx.world.backends(2);
    const first = await a.acquire(name, { revocable: true });
    await b.requestRevocation(name);
    await revoked(first);
    await first.release();
    const second = await a.acquire(name, { revocable: true });
    await turns();
    expect(second.revocation.aborted).toBe(false);
    expect(await asked(b, name)).toEqual([['write', true, false]]);
    await second.release();
  });

  it('revocable flows through ReentrantLocker (withLock, acquire, tryAcquire); nested holds share the outer revocation', async () => {
    const name = ctx.name('locker');
    const [a, b] = await ctx.world.backends(2);
    const locker = new ReentrantLocker(a, 10_000);
    const outcome = await locker.withLock(
      name,
      async (lock) => {
        const nested = await locker.acquire(name, { mode: 'read' });
        await b.requestRevocation(name);
        await revoked(lock);
        expect(nested.revocation).toBe(lock.revocation);
        await nested.release();
        return 'gave way';
      },
      { revocable: true },
    );
    expect(outcome).toBe('gave way');
    for (const take of [
      () => locker.acquire(name, { revocable: true }),
      () => locker.tryAcquire(name, { revocable: true }),
    ]) {
      const lock = (await take())!;
      await b.requestRevocation(name);
      await revoked(lock);
      await lock.release();
    }
    const plain = await locker.withLock(name, async (lock) => {
      await b.requestRevocation(name);
      await turns();
      return lock.revocation.aborted;
    });
    expect(plain).toBe(false);
  });

  it('bad input: a revocable that is not a boolean, a bad name, a lease semaphore, a closed client', async () => {
    const name = ctx.name('revoke-bad');
    const [a] = await ctx.world.backends(1);
    for (const value of ['yes', 1, null]) {
      const error = await rejectionOf(a.acquire(name, { revocable: value as unknown as boolean }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option: 'revocable' });
    }
    await expect(a.requestRevocation('')).rejects.toBeInstanceOf(InvalidLockNameError);
    const semaphore = `${name}/leases`; // leases are not locks: refused, as contenders() refuses them
    const lease = await a.acquireLease(semaphore, { maxLeases: 2 });
    await expect(a.requestRevocation(semaphore)).rejects.toBeInstanceOf(LockKindMismatchError);
    await lease.release();
    expect(await a.contenders(name)).toEqual([]);
    const [closing] = await ctx.world.backends(1);
    await closing.close();
    await expect(closing.requestRevocation(name)).rejects.toBeInstanceOf(LockClientClosedError);
  });
}
