import { encodeLockName } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

describe('fencing tokens, lock directories and contenders', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('fence')));
  afterAll(() => fx.cleanup());

  it('fencing tokens strictly increase over successive grants, across clients and modes', async () => {
    const clients = await fx.many(3);
    const tokens: bigint[] = [];
    for (let round = 0; round < 4; round++) {
      for (const [i, client] of clients.entries()) {
        const lock = await client.acquire('fenced', { mode: i === 1 ? 'read' : 'write' });
        expect(typeof lock.fencingToken).toBe('bigint');
        tokens.push(lock.fencingToken);
        await lock.release();
      }
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  });

  it('a token rises past a holder that was replaced while it held (expired session)', async () => {
    const holder = await fx.expirable();
    const [next] = await fx.many(1);
    const old = await holder.acquire('fenced2');
    const waiting = next.acquire('fenced2', { timeoutMs: 15_000 });
    await waitUntil(async () => (await fx.nodes('fenced2'))?.length === 2, 'the next client queues');
    await fx.expire(holder);
    const lock = await waiting;
    expect(lock.fencingToken).toBeGreaterThan(old.fencingToken);
    await lock.release();
  });

  it('tokens keep rising when the lock directory is deleted and created again', async () => {
    const [a] = await fx.many(1);
    const first = await a.acquire('phoenix');
    await first.release();
    expect(await fx.nodes('phoenix')).toBeNull(); // directory gone
    const second = await a.acquire('phoenix');
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    // The sequence restarts with the directory; the token does not.
    expect(nodeOf(second).slice(-10)).toBe(nodeOf(first).slice(-10));
    await second.release();
  });

  it('maps any name to exactly one directory under the root, and removes it when empty', async () => {
    const [a] = await fx.many(1);
    const lock = await a.acquire('orders/42');
    expect(await fx.tree()).toEqual([`${fx.rootPath}/orders%2F42`, `${fx.rootPath}/orders%2F42/${nodeOf(lock)}`]);
    expect(a.pathOf('orders/42')).toBe(`${fx.rootPath}/${encodeLockName('orders/42')}`);
    await lock.release();
    expect(await fx.tree()).toEqual([]);
    expect(await fx.inspector.exists(fx.rootPath)).toBe(true);
  });

  it('by default keeps an empty directory for a grace period, for a lock taken again soon', async () => {
    const a = await fx.backend({ emptyDirectoryGraceMs: 400 });
    await (await a.acquire('hot')).release();
    expect(await fx.nodes('hot')).toEqual([]); // empty, kept
    const before = a.client.counter.snapshot();
    const again = await a.acquire('hot');
    await again.release();
    const after = a.client.counter.snapshot();
    // One create (the node), no refused create, no directory re-create or delete.
    expect([after.create - before.create, (after.remove ?? 0) - (before.remove ?? 0)]).toEqual([1, 1]);
    await waitUntil(async () => (await fx.nodes('hot')) === null, 'the idle directory is removed after its grace');
  });

  it("a directory in use survives another client's sweep, and close() sweeps at once", async () => {
    const sweeper = await fx.backend({ emptyDirectoryGraceMs: 200 });
    const [holder] = await fx.many(1);
    await (await sweeper.acquire('busy-dir')).release(); // sweeper schedules its removal
    const held = await holder.acquire('busy-dir');
    await new Promise((r) => setTimeout(r, 400)); // the sweep ran: ZooKeeper refused it
    expect(await fx.nodes('busy-dir')).toEqual([nodeOf(held)]);
    await held.release();

    const closing = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    await (await closing.acquire('closing-dir')).release();
    expect(await fx.nodes('closing-dir')).toEqual([]);
    await closing.close();
    expect(await fx.nodes('closing-dir')).toBeNull();
  });

  it('never removes directories with removeEmptyDirectories: false', async () => {
    const a = await fx.backend({ removeEmptyDirectories: false, emptyDirectoryGraceMs: 50 });
    await (await a.acquire('kept')).release();
    await new Promise((r) => setTimeout(r, 200));
    await a.close();
    expect(await fx.nodes('kept')).toEqual([]);
    await fx.inspector.removeTree(a.pathOf('kept'));
  });

  it('writes the node in Kazoo format with the client identity as data', async () => {
    const a = await fx.backend({ identity: 'billing-worker-7' });
    const w = await a.acquire('kazoo-format');
    const r = await a.acquire('kazoo-format-r', { mode: 'read' });
    expect(nodeOf(w)).toMatch(/^[0-9a-f]{32}__lock__\d{10}$/);
    expect(nodeOf(r)).toMatch(/^[0-9a-f]{32}__rlock__\d{10}$/);
    expect(await fx.inspector.data(w.path)).toBe('billing-worker-7');
    await Promise.all([w.release(), r.release()]);
  });

  it('re-creates a directory that vanished, and survives acquires racing the clean-up', async () => {
    const clients = await fx.many(4);
    await fx.inspector.create(clients[0].pathOf('churn'));
    await fx.inspector.removeTree(clients[0].pathOf('churn'));
    let sections = 0;
    await Promise.all(
      clients.map(async (client, i) => {
        for (let n = 0; n < 25; n++) {
          const lock = i % 2 ? await client.tryAcquire('churn') : await client.acquire('churn', { timeoutMs: 20_000 });
          if (!lock) continue;
          sections++;
          await lock.release();
        }
      }),
    );
    expect(sections).toBeGreaterThanOrEqual(50); // every blocking acquire got through
    expect(await fx.tree()).toEqual([]);
  });

  it('lists contenders in queue order with mode, identity and who holds', async () => {
    const a = await fx.backend({ identity: 'client-a' });
    const b = await fx.backend({ identity: 'client-b' });
    const c = await fx.backend({ identity: 'client-c' });
    const r1 = await a.acquire('listed', { mode: 'read' });
    const r2 = await b.acquire('listed', { mode: 'read' });
    const w = c.acquire('listed', { timeoutMs: 10_000 });
    await waitUntil(async () => (await fx.nodes('listed'))?.length === 3, 'the writer queues');

    const contenders = await a.contenders('listed');
    expect(contenders.map(({ mode, identity, holding }) => ({ mode, identity, holding }))).toEqual([
      { mode: 'read', identity: 'client-a', holding: true },
      { mode: 'read', identity: 'client-b', holding: true },
      { mode: 'write', identity: 'client-c', holding: false },
    ]);
    expect(contenders.map((x) => x.node).sort()).toEqual((await fx.nodes('listed'))!.sort());
    expect(contenders[0].sequence).toBeLessThan(contenders[1].sequence);
    expect(await a.contenders('nobody-here')).toEqual([]);

    await Promise.all([r1.release(), r2.release()]);
    await (await w).release();
  });
});
