import { InvalidOptionError, LockClientClosedError, type ListedLock } from '../../../lib/index';
import { waitUntil } from '../../support/wait-until';
import { queued } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

/** `[name, [[mode, holding], …]]` of each listed lock: holders first, then waiters, in queue order. */
const shape = (listing: ListedLock[]) =>
  listing.map((lock) => [
    lock.name,
    [...lock.holders, ...lock.waiters].map((e) => ['mode' in e ? e.mode : 'lease', e.holding]),
  ]);

export function listingCases(ctx: ConformanceContext): void {
  it('lists the locks under a prefix, in name order, with holders and waiters as contenders() has them, and since when', async () => {
    const base = ctx.name('listing');
    const [a, b, c] = await ctx.world.backends(3);
    const started = Date.now();
    const held = [
      await a.acquire(`${base}/b`, { mode: 'read' }),
      await b.acquire(`${base}/b`, { mode: 'read' }),
      await a.acquire(`${base}/a`),
    ];
    const waiting = [
      c.acquire(`${base}/b`, { timeoutMs: 10_000 }),
      c.acquire(`${base}/a`, { mode: 'read', timeoutMs: 10_000 }),
    ];
    await Promise.all([queued(a, `${base}/b`, 3), queued(a, `${base}/a`, 2)]);
    const listed = Date.now();

    const listing = await c.locks(`${base}/`);
    expect(shape(listing)).toEqual([
      [
        `${base}/a`,
        [
          ['write', true],
          ['read', false],
        ],
      ],
      [
        `${base}/b`,
        [
          ['read', true],
          ['read', true],
          ['write', false],
        ],
      ],
    ]);
    for (const lock of listing) {
      expect(lock.kind).toBe('lock');
      const entries = [...lock.holders, ...lock.waiters];
      // The same as contenders(), plus since (and, on ZooKeeper, the owner's sessionId).
      expect(entries.map(({ since: _since, sessionId: _sessionId, ...rest }) => rest)).toEqual(
        await a.contenders(lock.name),
      );
      for (const { since } of entries) {
        expect(since).toBeInstanceOf(Date);
        expect(since.getTime()).toBeGreaterThanOrEqual(started);
        expect(since.getTime()).toBeLessThanOrEqual(listed);
      }
    }
    // Queue order shows in `since` too: a waiter queued after the holders.
    const [, b2] = listing;
    expect(b2.waiters[0].since.getTime()).toBeGreaterThanOrEqual(b2.holders[1].since.getTime());

    await Promise.all(held.map((lock) => lock.release()));
    const granted = await Promise.all(waiting);
    await Promise.all(granted.map((lock) => lock.release()));
    // Another client sees them gone once ZooKeeper confirmed the deletes.
    await Promise.all([...held, ...granted].map((lock) => lock.releaseConfirmed));
    await expect(c.locks(`${base}/`)).resolves.toEqual([]);
  });

  it('lists a lease semaphore beside the locks: kind lease, maxLeases, holders then waiters in queue order', async () => {
    const base = ctx.name('listing-leases');
    const [a, b] = await ctx.world.backends(2);
    const lock = await a.acquire(`${base}/lock`);
    const leases = [
      await a.acquireLease(`${base}/pool`, { maxLeases: 2 }),
      await b.acquireLease(`${base}/pool`, { maxLeases: 2 }),
    ];
    const waiting = a.acquireLease(`${base}/pool`, { maxLeases: 2, timeoutMs: 10_000 });
    await waitUntil(async () => (await b.leaseContenders(`${base}/pool`)).length === 3, 'the third lease waits');
    const listing = await b.locks(`${base}/`);
    expect(shape(listing)).toEqual([
      [`${base}/lock`, [['write', true]]],
      [
        `${base}/pool`,
        [
          ['lease', true],
          ['lease', true],
          ['lease', false],
        ],
      ],
    ]);
    expect(listing[1]).toMatchObject({ kind: 'lease', maxLeases: 2 });
    const pool = listing[1];
    expect([...pool.holders, ...pool.waiters].map(({ since: _since, sessionId: _sessionId, ...rest }) => rest)).toEqual(
      await a.leaseContenders(`${base}/pool`),
    );
    await Promise.all([lock.release(), ...leases.map((lease) => lease.release())]);
    const granted = await waiting;
    await granted.release();
    await Promise.all([lock, granted, ...leases].map((handle) => handle.releaseConfirmed));
    await expect(b.locks(`${base}/`)).resolves.toEqual([]);
  });

  it('a prefix matches the start of the name only, and an emptied lock is no longer listed', async () => {
    const base = ctx.name('prefix');
    const [a, b] = await ctx.world.backends(2);
    const names = [`${base}/x`, `${base}/xy`, `${base}/y`, `${base}x`];
    const held = await Promise.all(names.map((name) => a.acquire(name)));
    const listedNames = async (prefix: string) => (await b.locks(prefix)).map((lock) => lock.name);
    expect(await listedNames(`${base}/x`)).toEqual([`${base}/x`, `${base}/xy`]);
    expect(await listedNames(base)).toEqual([`${base}/x`, `${base}/xy`, `${base}/y`, `${base}x`]);
    expect(await listedNames(`${base}/nothing`)).toEqual([]);
    expect((await b.locks()).map((lock) => lock.name)).toEqual(expect.arrayContaining(names));

    await held[0].release();
    expect(await listedNames(`${base}/x`)).toEqual([`${base}/xy`]);
    await Promise.all(held.slice(1).map((lock) => lock.release()));
    expect(await listedNames(base)).toEqual([]);
  });

  it('shows the revocation request in the identity of the holders asked', async () => {
    const base = ctx.name('listing-revoked');
    const [a, b] = await ctx.world.backends(2);
    const lock = await a.acquire(`${base}/r`);
    await b.requestRevocation(`${base}/r`);
    const [listed] = await b.locks(`${base}/`);
    expect(listed.holders.map((h) => h.identity)).toEqual(['__REVOKE__']);
    await lock.release();
  });

  it('refuses a prefix that is not a string, and a closed client', async () => {
    const [a] = await ctx.world.backends(1);
    for (const prefix of [42, null, {}])
      await expect(a.locks(prefix as unknown as string)).rejects.toBeInstanceOf(InvalidOptionError);
    await a.close();
    await expect(a.locks()).rejects.toBeInstanceOf(LockClientClosedError);
  });
}
