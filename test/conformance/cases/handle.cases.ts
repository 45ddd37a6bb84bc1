import { InvalidOptionError, LeaderElection, LockLostError, type LockHandle } from '../../../lib/index';
import { thrownBy } from '../../support/thrown-by';
import { TokenLedger } from '../../support/token-ledger';
import { waitUntil } from '../../support/wait-until';
import { KAZOO_NODE, queued, queueShape, track } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

export function handleCases(ctx: ConformanceContext): void {
  it('fencing tokens are bigints that strictly increase over successive grants, across clients and modes', async () => {
    const name = ctx.name('fenced');
    const clients = await ctx.world.backends(3);
    const tokens: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, client] of clients.entries()) {
        const lock = await client.acquire(name, { mode: i === 1 ? 'read' : 'write' });
        expect(typeof lock.fencingToken).toBe('bigint');
        tokens.push(lock.fencingToken);
        await lock.release();
      }
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  });

  it('a reader that joins a holding reader gets a higher token, and tokens keep rising once the queue empties', async () => {
    const name = ctx.name('fenced-readers');
    const [a, b] = await ctx.world.backends(2);
    const r1 = await a.acquire(name, { mode: 'read' });
    const r2 = await b.acquire(name, { mode: 'read' });
    expect(r2.fencingToken).toBeGreaterThan(r1.fencingToken);
    await Promise.all([r1.release(), r2.release()]);
    expect(await a.contenders(name)).toEqual([]);
    const w = await a.acquire(name);
    expect(w.fencingToken).toBeGreaterThan(r2.fencingToken);
    await w.release();
  });

  it('a token never goes down for a name: through its state dropped and made again, kind changes, readers, leases, a multi-lock, leaders and a loss', async () => {
    const name = ctx.name('leader:tokens'); // a leader's lock too: the group below
    const ledger = new TokenLedger();
    const [a, b] = await ctx.world.backends(2);
    const [keeper] = await ctx.world.keepingIdleNames(1);
    const holder = await ctx.world.losable();
    const write = async (client: typeof a, label: string): Promise<void> => {
      const lock = await client.acquire(name);
      ledger.grant(label, 'exclusive', lock.fencingToken);
      await lock.release();
      await lock.releaseConfirmed;
    };

    await write(a, 'a: write');
    await write(b, 'b: write, its state made again');
    const r1 = await keeper.acquire(name, { mode: 'read' });
    ledger.grant('keeper: read', 'shared', r1.fencingToken);
    const r2 = await b.acquire(name, { mode: 'read' });
    ledger.grant('b: read beside it', 'shared', r2.fencingToken);
    const called = ledger.call();
    const writer = track(a.acquire(name, { timeoutMs: 10_000 }));
    await queued(b, name, 3);
    await Promise.all([r1.release(), r2.release()]);
    const w = await writer.result;
    ledger.grant('a: write behind the readers', 'exclusive', w.fencingToken, called);
    await w.release();
    await write(keeper, 'keeper: write, kept idle');
    for (const [maxLeases, sharing] of [
      [1, 'exclusive'],
      [2, 'shared'],
    ] as const) {
      const lease = await keeper.acquireLease(name, { maxLeases });
      ledger.grant(`keeper: lease of ${maxLeases}`, sharing, lease.fencingToken);
      await lease.release();
      await lease.releaseConfirmed;
    }
    await write(keeper, 'keeper: write, a lock again');
    const group = await b.acquireAll([name, `${name}-other`]);
    ledger.grant('b: multi-lock', 'exclusive', group.handles[group.names.indexOf(name)].fencingToken);
    await group.release();
    const election = new LeaderElection(a, name.slice('leader:'.length));
    election.start();
    await waitUntil(() => election.isLeader, 'a leads');
    ledger.grant('a: leader', 'exclusive', election.fencingToken!);
    await election.stop();
    const lost = await holder.acquire(name);
    ledger.grant('holder: write, then lost', 'exclusive', lost.fencingToken);
    const next = track(b.acquire(name, { timeoutMs: 15_000 }));
    await queued(b, name, 2);
    await ctx.world.lose(holder, lost);
    const after = await next.result;
    ledger.grant('b: write after the loss', 'exclusive', after.fencingToken);
    await Promise.all([after.release(), lost.release()]);
    expect(ledger.tokens).toHaveLength(13);
  });

  it('release is idempotent (one promise) and `await using` releases', async () => {
    const name = ctx.name('release');
    const [a, b] = await ctx.world.backends(2);
    const lock = await a.acquire(name);
    expect(lock.released).toBe(false);
    const first = lock.release();
    expect(lock.release()).toBe(first);
    expect(lock.released).toBe(true);
    await Promise.all([first, lock.release()]);
    let disposed: LockHandle | undefined;
    {
      await using scoped = await a.acquire(name);
      disposed = scoped;
      expect(scoped.name).toBe(name);
      expect(await b.tryAcquire(name)).toBeNull();
    }
    expect(disposed.released).toBe(true);
    await disposed.releaseConfirmed; // another client finds it free once ZooKeeper confirmed the delete
    const again = await b.tryAcquire(name);
    expect(again).not.toBeNull();
    await again!.release();
  });

  it('releaseConfirmed: pending until release(), then settles; another client finds the lock, lease or group free at once after it', async () => {
    const name = ctx.name('confirmed');
    const [a, b] = await ctx.world.backends(2);
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const lock = await a.acquire(name);
    const lease = await a.acquireLease(`${name}-lease`, { maxLeases: 1, release: 'confirmed' }); // accepted by both
    const group = await a.acquireAll([`${name}-g1`, `${name}-g2`]);
    const confirmed: string[] = [];
    for (const [what, handle] of [
      ['lock', lock],
      ['lease', lease],
      ['group', group],
    ] as const)
      void handle.releaseConfirmed.then(() => confirmed.push(what));
    await turn();
    expect(confirmed).toEqual([]); // nothing released yet
    await Promise.all([lock.release(), lease.release(), group.release()]);
    expect([lock.isHeld(), lease.isHeld(), group.isHeld()]).toEqual([false, false, false]);
    await Promise.all([lock.releaseConfirmed, lease.releaseConfirmed, group.releaseConfirmed]);
    expect(confirmed.sort()).toEqual(['group', 'lease', 'lock']);
    const next = await b.tryAcquire(name);
    expect(next).not.toBeNull();
    const nextGroup = await b.acquireAll([`${name}-g2`, `${name}-g1`], { timeoutMs: 0 });
    const nextLease = await b.acquireLease(`${name}-lease`, { maxLeases: 1, timeoutMs: 0 });
    await Promise.all([next!.release(), nextGroup.release(), nextLease.release()]);
  });

  it('releasesConfirmed(): once it settles, another client finds every lock, lease and group released so far free', async () => {
    const name = ctx.name('all-confirmed');
    const [a, b] = await ctx.world.backends(2);
    const held = await Promise.all([
      a.acquire(name),
      a.acquireLease(`${name}-lease`, { maxLeases: 1 }),
      a.acquireAll([`${name}-g1`, `${name}-g2`]),
    ]);
    const kept = await a.acquire(`${name}-kept`); // not released: not waited for
    await Promise.all(held.map((handle) => handle.release()));
    await a.releasesConfirmed();
    const left = await Promise.all([
      b.contenders(name),
      b.leaseContenders(`${name}-lease`),
      b.contenders(`${name}-g1`),
      b.contenders(`${name}-g2`),
    ]);
    expect(left).toEqual([[], [], [], []]);
    expect(await b.contenders(`${name}-kept`)).toHaveLength(1);
    await kept.release();
    await a.releasesConfirmed();
    expect(await b.contenders(`${name}-kept`)).toEqual([]);
  });

  it('releasesConfirmed(options): a bad timeoutMs or an unknown option is refused with InvalidOptionError; a good one settles', async () => {
    const [a] = await ctx.world.backends(1);
    for (const bad of [{ timeoutMs: -1 }, { timeoutMs: 'soon' }, { timeout: 5 }, 'fast'])
      await expect(a.releasesConfirmed(bad as never)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(a.releasesConfirmed({ timeoutMs: 0 })).resolves.toBeUndefined(); // nothing to confirm
    await expect(a.releasesConfirmed({ timeoutMs: Infinity })).resolves.toBeUndefined();
  });

  it('isHeld and assertHeld: held until released; after release assertHeld throws a LockLostError', async () => {
    const name = ctx.name('held');
    const [a] = await ctx.world.backends(1);
    const lock = await a.acquire(name);
    expect(lock.isHeld()).toBe(true);
    expect(() => lock.assertHeld()).not.toThrow();
    await lock.release();
    expect(lock.isHeld()).toBe(false);
    expect(lock.signal.aborted).toBe(false); // released, not lost
    const error = thrownBy(() => lock.assertHeld());
    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ code: 'LOCK_LOST', lockName: name });
    expect((error as Error).message).toMatch(/released/);
  });

  it('a lost lock: the signal aborts with a LockLostError, isHeld turns false, and the next waiter gets in', async () => {
    const name = ctx.name('lost');
    const holder = await ctx.world.losable();
    const [other] = await ctx.world.backends(1);
    const lock = await holder.acquire(name);
    const next = track(other.acquire(name, { timeoutMs: 15_000 }));
    await queued(other, name, 2);
    const heard: unknown[] = [];
    lock.signal.addEventListener('abort', () => heard.push(lock.signal.reason));

    await ctx.world.lose(holder, lock);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toMatchObject({ code: 'LOCK_LOST', lockName: name });
    expect(heard).toEqual([lock.signal.reason]);
    expect(lock.isHeld()).toBe(false);
    expect(thrownBy(() => lock.assertHeld())).toBe(lock.signal.reason);

    const granted = await next.result;
    expect(granted.fencingToken).toBeGreaterThan(lock.fencingToken);
    await lock.release(); // a no-op: the lock went with the loss
    expect(await queueShape(other, name)).toEqual([['write', true]]);
    await granted.release();
    await (await holder.acquire(name, { timeoutMs: 10_000 })).release(); // the client is still usable
  });

  it('lists contenders in queue order: Kazoo node names, sequence, mode, identity and who holds', async () => {
    const name = ctx.name('listed');
    const [a, b, c] = await ctx.world.backends(3);
    const r1 = await a.acquire(name, { mode: 'read' });
    const r2 = await b.acquire(name, { mode: 'read' });
    const w1 = track(c.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 3);
    const w2 = track(a.acquire(name, { timeoutMs: 10_000 }));
    await queued(a, name, 4);

    const list = await b.contenders(name);
    expect(list.map((x) => [x.mode, x.holding])).toEqual([
      ['read', true],
      ['read', true],
      ['write', false],
      ['write', false],
    ]);
    for (const x of list) {
      expect(x.node).toMatch(KAZOO_NODE);
      expect(x.node.includes('__rlock__')).toBe(x.mode === 'read');
      expect(x.sequence).toBe(Number(x.node.slice(-10)));
    }
    for (let i = 1; i < list.length; i++) expect(list[i].sequence).toBeGreaterThan(list[i - 1].sequence);
    const [ia, ib, ic, ia2] = list.map((x) => x.identity);
    expect(typeof ia === 'string' && ia.length > 0).toBe(true);
    expect(ia2).toBe(ia); // one client, one identity
    expect(new Set([ia, ib, ic]).size).toBe(3);
    expect(await a.contenders(ctx.name('nobody'))).toEqual([]);

    await Promise.all([r1.release(), r2.release()]);
    await (await w1.result).release();
    await (await w2.result).release();
  });
}
