import { setTimeout as sleep } from 'node:timers/promises';

import { ReentrantLocker, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

/** A kept hold's marker as the library names it (see core/port/kept-hold). */
const MARKER = /^kept-hold-[0-9a-f]{32}-lock-!__WRIT__!__lock__-0000000000$/;
const HOLD_MS = 1_500;

/**
 * `holdAtLeastMs` honoured by every acquirer of the name, not only by job calls: a marker in
 * the lock's own directory, which every acquire's children read sees.
 */
describe('kept holds: a marker in the lock directory', () => {
  let fx: LockFixture;
  beforeAll(async () => {
    fx = await LockFixture.create('kept-hold-marker');
  });
  afterAll(() => fx.cleanup());

  it('during a job’s kept hold: tryAcquire (write or read) gets null, ifLocked "skip" skips, a plain withLock waits until the hold ends; the marker goes then', async () => {
    const [a, b] = await fx.many(2);
    const job = new ReentrantLocker(a, 10_000);
    const other = new ReentrantLocker(b, 10_000);
    let startedAt = 0;
    await job.withLock('tick', () => void (startedAt = performance.now()), { holdAtLeastMs: HOLD_MS });

    // ZooKeeper's state: no lock node, one marker, ephemeral in the holder's session, saying the hold.
    const [marker, ...rest] = (await fx.nodes('tick')) ?? [];
    expect(rest).toEqual([]);
    expect(marker).toMatch(MARKER);
    const path = `${a.pathOf('tick')}/${marker}`;
    const data = JSON.parse((await fx.inspector.data(path))!) as { holdMs: number };
    expect(data).toEqual({ kind: 'nestjs-zk-lock/kept-hold', holdMs: expect.any(Number), by: a.options.identity });
    expect(data.holdMs).toBeGreaterThan(0);
    expect(data.holdMs).toBeLessThanOrEqual(HOLD_MS);

    expect(await b.tryAcquire('tick')).toBeNull();
    expect(await b.tryAcquire('tick', { mode: 'read' })).toBeNull();
    expect(await other.withLock('tick', () => 'ran', { ifLocked: 'skip' })).toBeUndefined();
    expect(await fx.nodes('tick')).toEqual([marker]); // the tries left nothing behind
    const waiting = other.withLock('tick', () => performance.now(), { timeoutMs: 10_000 });
    await fx.queued('tick', 2);
    // First in line, yet not holding while the hold lasts: listings and revocation agree.
    expect(await a.contenders('tick')).toEqual([expect.objectContaining({ holding: false })]);
    expect(await a.requestRevocation('tick')).toBe(0);
    const grantedAt = await waiting;
    expect(grantedAt).toBeGreaterThanOrEqual(startedAt + HOLD_MS);
    expect(await fx.inspector.exists(path)).toBe(false);
  });

  it('with nobody acquiring, the holder deletes its marker at the hold’s end (and the empty directory goes)', async () => {
    const [a] = await fx.many(1);
    let startedAt = 0;
    await new ReentrantLocker(a, 10_000).withLock('alone', () => void (startedAt = performance.now()), {
      holdAtLeastMs: HOLD_MS,
    });
    const [marker] = (await fx.nodes('alone')) ?? [];
    expect(marker).toMatch(MARKER);
    await fx.inspector.deletion(`${a.pathOf('alone')}/${marker}`);
    expect(performance.now()).toBeGreaterThanOrEqual(startedAt + HOLD_MS);
    await waitUntil(async () => (await fx.nodes('alone')) === null, 'the empty directory is swept');
  });

  it('a marker left by a holder that died (persistent, nobody’s timer) is judged on ZooKeeper’s clock: held until its end, then deleted by the next acquirer', async () => {
    const [a] = await fx.many(1);
    await (await a.acquire('orphan')).release(); // the directory
    await a.releasesConfirmed();
    const marker = 'kept-hold-0123456789abcdef0123456789abcdef-lock-!__WRIT__!__lock__-0000000000';
    const path = `${a.pathOf('orphan')}/${marker}`;
    await fx.inspector.create(path, JSON.stringify({ kind: 'nestjs-zk-lock/kept-hold', holdMs: HOLD_MS, by: 'gone' }));
    const madeAt = performance.now();
    expect(await a.tryAcquire('orphan')).toBeNull();
    expect(await fx.inspector.exists(path)).toBe(true);
    const lock = await a.acquire('orphan', { timeoutMs: 10_000 });
    expect(performance.now() - madeAt).toBeGreaterThanOrEqual(HOLD_MS - 50); // its ctime is stamped after `madeAt`'s read, within a round trip
    expect(await fx.inspector.exists(path)).toBe(false);
    await lock.release();
  });

  it('a holder that closes during its hold leaves a persistent marker for the time left: honoured to its end, then deleted by the next acquirer', async () => {
    const [a, b] = await fx.many(2);
    let startedAt = 0;
    await new ReentrantLocker(a, 10_000).withLock('closing', () => void (startedAt = performance.now()), {
      holdAtLeastMs: HOLD_MS,
    });
    await a.close();
    const [marker, ...rest] = (await fx.nodes('closing', b)) ?? [];
    expect(rest).toEqual([]);
    expect(marker).toMatch(/^kept-hold-[0-9a-f]{32}$/); // a name Curator and Kazoo ignore
    const path = `${b.pathOf('closing')}/${marker}`;
    expect(JSON.parse((await fx.inspector.data(path))!)).toMatchObject({ kind: 'nestjs-zk-lock/kept-hold' });
    expect(await b.tryAcquire('closing')).toBeNull();
    const lock = await b.acquire('closing', { timeoutMs: 10_000 });
    expect(performance.now()).toBeGreaterThanOrEqual(startedAt + HOLD_MS);
    expect(await fx.inspector.exists(path)).toBe(false);
    await lock.release();
  });

  /** A client connected through a proxy of its own, for faults on its link; the proxy stops after `test`. */
  const throughProxy = async (test: (proxy: TcpProxy, a: ZkLockBackend) => Promise<void>): Promise<void> => {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      await test(proxy, await fx.backend({ connectionString: proxy.connectionString }));
    } finally {
      await proxy.stop();
    }
  };

  it('a close whose marker write is answered to nobody (the link cut after the server acted on it) leaves the persistent marker alone: it replaced the ephemeral one in one transaction', () =>
    throughProxy(async (proxy, a) => {
      await new ReentrantLocker(a, 10_000).withLock('cut-close', () => undefined, { holdAtLeastMs: 10_000 });
      const [ephemeral] = (await fx.nodes('cut-close')) ?? [];
      expect(ephemeral).toMatch(MARKER);
      // The first write close() sends, whichever form it takes: the link goes once the server
      // answered it, so the client closes while reconnecting and cannot end its session.
      const cut = proxy.cutAfter([ZK_OP.create, ZK_OP.multi]);
      await a.close();
      await cut;
      const [marker, ...rest] = (await fx.inspector.children(a.pathOf('cut-close'))) ?? [];
      expect({ marker, rest }).toEqual({ marker: expect.stringMatching(/^kept-hold-[0-9a-f]{32}$/), rest: [] });
      expect(await fx.inspector.owner(`${a.pathOf('cut-close')}/${marker}`)).toBeNull(); // persistent
      await fx.inspector.removeTree(a.pathOf('cut-close')); // the hold would outlast the suite
    }));

  it('a close after a marker whose create never reached the server (the holder kept its lock node instead) still leaves the persistent marker', () =>
    throughProxy(async (proxy, a) => {
      const job = new ReentrantLocker(a, 10_000);
      await job.withLock('never-made', () => undefined, { holdAtLeastMs: 1 }); // its record exists from now on
      await sleep(5);
      let cut: Promise<void> | undefined;
      // The body's end writes the record (a setData), then creates the marker: that create is cut.
      await job.withLock('never-made', () => void (cut = proxy.cutBefore(ZK_OP.create)), { holdAtLeastMs: 10_000 });
      await cut;
      await waitUntil(() => a.client.session.isConnected, 'the client reconnects');
      await a.close(); // it releases the lock node the locker kept
      await job.drain(0); // and the locker's timer for it goes
      const [marker, ...rest] = (await fx.nodes('never-made')) ?? [];
      expect({ marker, rest }).toEqual({ marker: expect.stringMatching(/^kept-hold-[0-9a-f]{32}$/), rest: [] });
      await fx.inspector.removeTree(a.pathOf('never-made')); // the hold would outlast the suite
    }));

  it('no hold, no marker and no extra request: a plain acquire costs what it did, a job that outlasts its hold leaves nothing', async () => {
    const a = await fx.backend({ emptyDirectoryGraceMs: 60_000 }); // a hot lock's directory stays
    const locker = new ReentrantLocker(a, 10_000);
    const run = (): Promise<unknown> => locker.withLock('long', () => sleep(50), { holdAtLeastMs: 20 });
    await run(); // the record exists from now on
    let before = a.client.counter.snapshot();
    await run();
    await a.releasesConfirmed();
    // The lock node's create and delete, the record's read and write: no marker made.
    expect(countsSince(a, before)).toEqual({ create: 1, getChildren: 1, remove: 1, getData: 1, setData: 1 });
    expect(await fx.nodes('long')).toEqual([]);

    await (await a.acquire('plain')).release();
    before = a.client.counter.snapshot();
    await (await a.acquire('plain')).release();
    await a.releasesConfirmed();
    expect(countsSince(a, before)).toEqual({ create: 1, getChildren: 1, remove: 1 });
  });
});
