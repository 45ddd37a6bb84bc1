import { InMemoryLockBackend } from './in-memory-lock-backend.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';

describe('InMemoryLockStore: what backends share', () => {
  const backends: InMemoryLockBackend[] = [];
  const backend = (store?: InMemoryLockStore): InMemoryLockBackend => {
    const made = new InMemoryLockBackend(store && { store });
    backends.push(made);
    return made;
  };
  afterEach(async () => void (await Promise.all(backends.splice(0).map((b) => b.close()))));

  it('backends given one store contend; backends with stores of their own never meet', async () => {
    const store = new InMemoryLockStore();
    const [a, b] = [backend(store), backend(store)];
    const loner = backend();
    const held = await a.acquire('shared');
    expect(await b.tryAcquire('shared')).toBeNull();
    const elsewhere = await loner.tryAcquire('shared');
    expect(elsewhere).not.toBeNull();
    expect((await b.contenders('shared')).map((c) => c.identity)).toEqual([a.identity]);
    expect((await loner.contenders('shared')).map((c) => c.identity)).toEqual([loner.identity]);
    await Promise.all([held.release(), elsewhere!.release()]);
  });

  it('numbers a queue like a lock directory: from 0 again once it emptied, while tokens keep rising', async () => {
    const a = backend();
    const first = await a.acquire('phoenix');
    const second = a.acquire('phoenix');
    expect((await a.contenders('phoenix')).map((c) => c.sequence)).toEqual([0, 1]);
    await first.release();
    await (await second).release();
    const again = await a.acquire('phoenix');
    expect((await a.contenders('phoenix')).map((c) => c.sequence)).toEqual([0]);
    expect(again.node).toMatch(/__lock__0000000000$/);
    expect(again.fencingToken).toBeGreaterThan(first.fencingToken);
    await again.release();
  });

  it('tokens come from one counter of changes for every lock, as ZooKeeper zxids do', async () => {
    const a = backend();
    const x = await a.acquire('x');
    const y = await a.acquire('y');
    expect(y.fencingToken).toBeGreaterThan(x.fencingToken);
    await Promise.all([x.release(), y.release()]);
  });

  it('readers let in by one change share its token, as they share the pzxid on ZooKeeper', async () => {
    const store = new InMemoryLockStore();
    const [a, b, c] = [backend(store), backend(store), backend(store)];
    const writer = await a.acquire('doc');
    const readers = [b.acquire('doc', { mode: 'read' }), c.acquire('doc', { mode: 'read' })];
    await writer.release();
    const [r1, r2] = await Promise.all(readers);
    expect(r1.fencingToken).toBe(r2.fencingToken);
    expect(r1.fencingToken).toBeGreaterThan(writer.fencingToken);
    const r3 = await a.acquire('doc', { mode: 'read' }); // joins later: a change of its own
    expect(r3.fencingToken).toBeGreaterThan(r2.fencingToken);
    await Promise.all([r1.release(), r2.release(), r3.release()]);
  });

  it('a release lets the next in line in at once, for a lock and for a lease', async () => {
    const store = new InMemoryLockStore();
    const [a, b] = [backend(store), backend(store)];
    const [lock, lease] = await Promise.all([a.acquire('x'), a.acquireLease('s', { maxLeases: 1 })]);
    const next = Promise.all([b.acquire('x'), b.acquireLease('s', { maxLeases: 1 })]);
    next.catch(() => undefined); // if an expectation fails, close() ends the waits
    await Promise.all([lock.release(), lease.release()]);
    expect((await b.contenders('x')).map((c) => [c.identity, c.holding])).toEqual([[b.identity, true]]);
    expect((await b.leaseContenders('s')).map((c) => [c.identity, c.holding])).toEqual([[b.identity, true]]);
    await Promise.all((await next).map((handle) => handle.release()));
  });

  it("a handle's node is its entry in contenders()", async () => {
    const a = backend();
    const lock = await a.acquire('named', { mode: 'read' });
    expect(await a.contenders('named')).toEqual([
      { node: lock.node, mode: 'read', sequence: 0, format: 'kazoo', identity: a.identity, holding: true },
    ]);
    await lock.release();
  });
});
