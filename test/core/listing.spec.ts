import * as zookeeper from 'node-zookeeper-client';

import {
  InvalidOptionError,
  ReentrantLocker,
  runOnce,
  LockClientClosedError,
  type LockHandle,
  type ListedLock,
  type ZkLockBackend,
  type ZkLockHandle,
  type ZkLockOptions,
} from '../../lib/index';
import { leaseDirectoryData } from '../../lib/core/zookeeper/queue/directory-marker';
import { closeRawClient, createNode, openRawClient, statOf, type RawClient } from '../harness/raw-client';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP, type ProxiedRequest } from '../support/tcp-proxy';
import { waitFor } from '../support/wait-for';
import { ZkServer } from '../support/zookeeper/zk-server';

const GUID = '0123456789abcdef0123456789abcdef';

/** What `locks()` says of a lock, in short: name, then `[mode, identity, holding]` of each node in queue order. */
const shape = (listing: ListedLock[]) =>
  listing.map((lock) => [
    lock.name,
    [...lock.holders, ...lock.waiters].map((e) => ['mode' in e ? e.mode : 'lease', e.identity, e.holding]),
  ]);

/** `srvr` as a server before 3.6 answers it: such a server is sent no multiRead. */
const SRVR_35 = 'Zookeeper version: 3.5.10-c2a6ba5e7d4f3bd1d2c5a49dc6bfcf9bd1b0b1e9, built on 2022-05-30 08:39 UTC\n';

/** How locks() reads: one multiRead a round (ZooKeeper 3.6 and later), or one request a read (older servers). */
const MODES = [
  { title: 'one multiRead a round (ZooKeeper 3.6+)', multiRead: true },
  { title: 'one request a read (a server before 3.6)', multiRead: false },
] as const;

/**
 * On a server of its own, with tickTime 1000 (sessions up to 20 s): the cost tests hold a
 * watcher's replies across several steps, and the suite's server caps every session at 4 s
 * (20 × tickTime 200), under the 10 s the watcher asks for, so on a heavily loaded machine
 * (a load average above 13) those steps outlasted its session.
 */
const server = new ZkServer({ tickTime: 1000 });
beforeAll(() => server.start());
afterAll(() => server.destroy());

describe.each(MODES)(
  'locks(): who holds and who waits, for every lock under the root, reading $title',
  ({ multiRead }) => {
    let fx: LockFixture;
    let raw: RawClient;
    /** In the second mode, every client connects through this proxy, which answers `srvr` as 3.5. */
    let older: TcpProxy | undefined;
    beforeAll(async () => {
      raw = await openRawClient(server.connectionString);
      if (multiRead) return;
      older = new TcpProxy(server.clientPort);
      older.fourLetterReply = SRVR_35;
      await older.start();
    });
    afterAll(async () => {
      await closeRawClient(raw.client);
      await older?.stop();
    });
    // A root of its own for each case: each lists everything under it.
    beforeEach(async () => (fx = await LockFixture.create('listing', server.connectionString)));
    afterEach(() => fx.cleanup());

    /** A lock client that knows already whether its server takes a multiRead. */
    const client = async (options: Partial<ZkLockOptions> = {}): Promise<ZkLockBackend> => {
      const backend = await fx.backend({ ...(older && { connectionString: older.connectionString }), ...options });
      await backend.client.liveSession().readyToReadTogether();
      return backend;
    };
    const many = (count: number): Promise<ZkLockBackend[]> =>
      Promise.all(Array.from({ length: count }, () => client()));

    /** The node's creation time, as ZooKeeper's stat has it. */
    const ctimeOf = async (path: string): Promise<number> =>
      Number((await statOf(raw.client, path))!.ctime.readBigInt64BE(0));

    it('lists holders, waiters and readers with mode, identity, sequence, node and since (the node ctime), in name order', async () => {
      const [a, b, c, d] = await Promise.all(
        ['app-a', 'app-b', 'app-c', 'app-d'].map((identity) => client({ identity })),
      );
      const held: LockHandle[] = [
        await a.acquire('orders/42'),
        await a.acquire('reports', { mode: 'read' }),
        await c.acquire('reports', { mode: 'read' }),
      ];
      held.push(await c.acquire('..'), await d.acquire('café/ü'));
      const waits = [b.acquire('orders/42', { timeoutMs: 10_000 }), d.acquire('reports', { timeoutMs: 10_000 })];
      await Promise.all([fx.queued('orders/42', 2), fx.queued('reports', 3)]);
      waits.push(b.acquire('reports', { mode: 'read', timeoutMs: 10_000 }));
      await fx.queued('reports', 4);

      const listing = await b.locks();
      expect(shape(listing)).toEqual([
        ['..', [['write', 'app-c', true]]],
        ['café/ü', [['write', 'app-d', true]]],
        [
          'orders/42',
          [
            ['write', 'app-a', true],
            ['write', 'app-b', false],
          ],
        ],
        [
          'reports',
          [
            ['read', 'app-a', true],
            ['read', 'app-c', true],
            ['write', 'app-d', false],
            ['read', 'app-b', false],
          ],
        ],
      ]);
      expect(listing.every((lock) => lock.kind === 'lock')).toBe(true);
      const owners = [a, b, c, d].map((backend) => `0x${backend.client.session.id}`);
      // Every entry is the node ZooKeeper has: its name, sequence, creation time and owner session.
      for (const lock of listing) {
        const dir = b.pathOf(lock.name);
        const entries = [...lock.holders, ...lock.waiters];
        expect(entries.map((e) => e.node)).toEqual(
          [...(await fx.nodes(lock.name))!].sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10))),
        );
        for (const entry of entries) {
          expect(entry.sequence).toBe(Number(entry.node.slice(-10)));
          expect(entry.since).toBeInstanceOf(Date);
          expect(entry.since.getTime()).toBe(await ctimeOf(`${dir}/${entry.node}`));
          expect(owners).toContain(entry.sessionId); // the node's ephemeral owner: one of the clients' sessions
        }
        // The same queue as contenders() reports, plus `since` and `sessionId`.
        expect(entries.map(({ since: _since, sessionId: _sessionId, ...rest }) => rest)).toEqual(
          await b.contenders(lock.name),
        );
      }
      expect(await fx.inspector.children(fx.rootPath)).toEqual([
        '%2E%2E',
        'caf%C3%A9%2F%C3%BC',
        'orders%2F42',
        'reports',
      ]);

      await Promise.all(held.map((lock) => lock.release()));
      const granted = [];
      for (const wait of waits) {
        granted.push(await wait);
        await granted.at(-1)!.release(); // in queue order: each lets the next in
      }
      await Promise.all([...held, ...granted].map((lock) => lock.releaseConfirmed));
      await expect(b.locks()).resolves.toEqual([]); // emptied: nothing left to list
    });

    it('filters by name prefix before reading: only the matching directories are read', async () => {
      const [a, b] = await many(2);
      const held = await Promise.all(
        ['orders/42', 'orders/43', 'orders', 'ordersX', 'reports'].map((name) => a.acquire(name)),
      );
      const names = async (prefix?: string): Promise<string[]> => (await b.locks(prefix)).map((lock) => lock.name);
      expect(await names()).toEqual(['orders', 'orders/42', 'orders/43', 'ordersX', 'reports']);
      expect(await names('orders/')).toEqual(['orders/42', 'orders/43']);
      expect(await names('orders/43')).toEqual(['orders/43']);
      expect(await names('orders')).toEqual(['orders', 'orders/42', 'orders/43', 'ordersX']);
      expect(await names('')).toEqual(await names());
      expect(await names('zzz')).toEqual([]);

      const before = b.client.counter.snapshot();
      await b.locks('orders/');
      const after = b.client.counter.snapshot();
      if (multiRead) {
        expect((after.getChildren ?? 0) - (before.getChildren ?? 0)).toBe(2); // the root, and the records folder beside it
        expect((after.multiRead ?? 0) - (before.multiRead ?? 0)).toBe(2); // the two matching directories; their nodes
        expect(after.getData ?? 0).toBe(before.getData ?? 0);
      } else {
        expect((after.getChildren ?? 0) - (before.getChildren ?? 0)).toBe(2 + 2); // the root and the records folder, then the two matching directories
        expect((after.getData ?? 0) - (before.getData ?? 0)).toBe(2); // one read per node in them
      }
      await Promise.all(held.map((lock) => lock.release()));
    });

    it("lists jobs with their last run from their records, idle ones too, reading the matching records only (run-once's never)", async () => {
      const [a, b] = await Promise.all([client({ emptyDirectoryGraceMs: 0 }), client()]);
      const locker = new ReentrantLocker(a, 10_000);
      await locker.withLock('jobs/idle', () => 'ran', { maxHoldMs: 60_000 });
      await locker.withLock('jobs/busy', () => 'ran', { maxHoldMs: 60_000 });
      await locker.withLock('other', () => 'ran', { maxHoldMs: 60_000 });
      await runOnce(a, 'jobs/migrate', () => undefined);
      const busy = await a.acquire('jobs/busy');
      await waitFor(async () => (await fx.nodes('jobs/idle')) === null, { what: "the idle job's directory swept" });

      const before = b.client.counter.snapshot();
      const listed = await b.locks('jobs/');
      const after = b.client.counter.snapshot();
      expect(
        listed.map((lock) => [lock.name, lock.holders.length, lock.kind === 'lock' && lock.lastRun?.outcome]),
      ).toEqual([
        ['jobs/busy', 1, 'ok'],
        ['jobs/idle', 0, 'ok'],
      ]);
      const sent = (op: string): number => (after[op] ?? 0) - (before[op] ?? 0);
      // The root, the records folder, the one directory, its one node; then the two matching records (one multiRead).
      const reads = [sent('getChildren'), sent('getData'), sent('multiRead')];
      expect(reads).toEqual(multiRead ? [3, 1, 1] : [3, 1 + 2, 0]);
      await busy.release();
    });

    it('skips directories and nodes that are not ours, leftover empty directories, and a root that does not exist', async () => {
      const [a, b] = await many(2);
      await expect(b.locks()).resolves.toEqual([]); // the root does not exist yet
      const root = fx.rootPath;
      const lockNode = `${GUID}__lock__0000000001`;
      await fx.inspector.create(`${root}/a b/${lockNode}`); // "a b" is not how we name "a b"
      await fx.inspector.create(`${root}/a%2fb/${lockNode}`); // nor lower-case escapes
      await fx.inspector.create(`${root}/bad%zz/${lockNode}`); // nor malformed ones
      await fx.inspector.create(`${root}/curator/_c_0b1e2f30-0000-4000-8000-000000000000-lock-0000000001`); // Curator's: a lock (not ephemeral here)
      await fx.inspector.create(`${root}/empty`);
      await fx.inspector.create(`${root}/notes`, 'a plain node with data');
      const mixed = await a.acquire('mixed');
      await fx.inspector.create(`${a.pathOf('mixed')}/readme`, 'not a lock node');
      const ok = await a.acquire('ok');

      expect(shape(await b.locks())).toEqual([
        ['curator', [['write', '', true]]],
        ['mixed', [['write', a.options.identity, true]]],
        ['ok', [['write', a.options.identity, true]]],
      ]);
      await fx.inspector.removeTree(`${a.pathOf('mixed')}/readme`);
      await Promise.all([mixed.release(), ok.release()]);
    });

    it("reports a semaphore's lease directory as kind 'lease' (the maxLeases lowest hold); without a limit, none holds", async () => {
      const [b] = await many(1);
      await fx.inspector.create(`${fx.rootPath}/pool`, leaseDirectoryData(2).toString('utf8'));
      await fx.inspector.create(`${fx.rootPath}/unlimited`, 'no marker');
      const leases = [];
      for (const identity of ['x', 'y', 'z'])
        leases.push(
          await createNode(
            raw.client,
            `${fx.rootPath}/pool/${GUID}__lease__`,
            zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
            identity,
          ),
        );
      await createNode(
        raw.client,
        `${fx.rootPath}/unlimited/${GUID}__lease__`,
        zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
        'w',
      );

      const listing = await b.locks();
      expect(shape(listing)).toEqual([
        [
          'pool',
          [
            ['lease', 'x', true],
            ['lease', 'y', true],
            ['lease', 'z', false],
          ],
        ],
        ['unlimited', [['lease', 'w', false]]],
      ]);
      const [pool, unlimited] = listing;
      expect(pool).toMatchObject({ kind: 'lease', maxLeases: 2 });
      expect(unlimited).toMatchObject({ kind: 'lease', maxLeases: null, holders: [] });
      expect(pool.holders[0].since.getTime()).toBe(await ctimeOf(leases[0]));
    });

    it("lists the lease recipe's own semaphores the way leaseContenders() sees them", async () => {
      const [a, b] = await many(2);
      const held = [await a.acquireLease('slots', { maxLeases: 2 }), await b.acquireLease('slots', { maxLeases: 2 })];
      const third = a.acquireLease('slots', { maxLeases: 2, timeoutMs: 10_000 });
      await fx.queued('slots', 3);
      const lock = await a.acquire('plain');

      const listing = await b.locks();
      expect(listing.map((l) => [l.kind, l.name])).toEqual([
        ['lock', 'plain'],
        ['lease', 'slots'],
      ]);
      const slots = listing[1];
      expect(slots).toMatchObject({ maxLeases: 2 });
      const entries = [...slots.holders, ...slots.waiters];
      const contenders = await b.leaseContenders('slots');
      expect(entries.map((e) => [e.node, e.identity, e.holding])).toEqual(
        contenders.map((c) => [c.node, c.identity, c.holding]),
      );
      expect(entries.map((e) => e.holding)).toEqual([true, true, false]);

      await held[0].release();
      await Promise.all([held[1].release(), (await third).release(), lock.release()]);
    });

    it('refuses a prefix that is not a string, and answers nothing once closed', async () => {
      const [b] = await many(1);
      await expect(b.locks(42 as unknown as string)).rejects.toBeInstanceOf(InvalidOptionError);
      await expect(b.locks(null as unknown as string)).rejects.toThrow(/Invalid option prefix=null/);
      await b.close();
      await expect(b.locks()).rejects.toBeInstanceOf(LockClientClosedError);
    });

    describe('cost, seen on the wire', () => {
      let proxy: TcpProxy;
      let watcher: ZkLockBackend;
      beforeEach(async () => {
        proxy = new TcpProxy(server.clientPort);
        await proxy.start();
        proxy.fourLetterReply = multiRead ? undefined : SRVR_35;
        // A session timeout long enough that replies held for a moment never look like a silent server.
        watcher = await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: 10_000 });
        await watcher.client.liveSession().readyToReadTogether();
      });
      afterEach(async () => {
        proxy.releaseReplies();
        await watcher.close();
        await proxy.stop();
      });

      /**
       * Bytes of ZooKeeper's replies to children reads of directories holding `counts[i]` lock
       * nodes each (Kazoo names: 50 characters): length prefix 4, reply header 16, vector count
       * 4, each name 4 + 50, stat 68. Replies come in request order, so once this many bytes
       * are held, every one of them is.
       */
      const childrenReplyBytes = (counts: number[]): number =>
        multiRead
          ? // One multiRead reply: length 4, header 16; each result's multi header 9, vector count 4, names; the end 9.
            counts.reduce((sum, n) => sum + 13 + 54 * n, 29)
          : counts.reduce((sum, n) => sum + 92 + 54 * n, 0);

      /** Lock reads sent since `mark`: children reads and data reads under the root, and multiReads (only the watcher's pass here). */
      const reads = (mark: number): ProxiedRequest[] =>
        proxy.requests
          .slice(mark)
          .filter(
            (r) =>
              r.op === ZK_OP.multiRead ||
              ((r.op === ZK_OP.getChildren2 || r.op === ZK_OP.getData) && r.path?.startsWith(fx.rootPath)),
          );

      it('50 locks with 60 nodes: three round trips (2 + 50 + 60 requests, or 4 with multiRead: the records folder read beside the root), each round sent whole before any of its replies', async () => {
        const [a, b] = await many(2);
        const names = Array.from({ length: 50 }, (_, i) => `load/${String(i).padStart(2, '0')}`);
        const held = await Promise.all(names.map((name) => a.acquire(name)));
        const waits = names.slice(0, 10).map((name) => b.acquire(name, { timeoutMs: 20_000 }));
        await Promise.all(names.slice(0, 10).map((name) => fx.queued(name, 2)));
        const [directoryReads, nodeReads] = multiRead ? [1, 1] : [50, 60];

        const before = watcher.client.counter.snapshot();
        const mark = proxy.requests.length;
        proxy.holdReplies();
        const listing = watcher.locks('load/');
        // Round trip 1: the root's children, and the records folder's (for jobs' last runs; it has none here).
        await waitFor(() => reads(mark).length === 2 && proxy.heldReplyBytes > 0, { what: 'the root read' });
        expect(reads(mark)).toEqual([
          { op: ZK_OP.getChildren2, path: fx.rootPath },
          { op: ZK_OP.getChildren2, path: `${fx.rootPath}-records` },
        ]);
        // Round trip 2: all 50 directories, sent from that one reply, none answered yet.
        proxy.releaseReplies();
        proxy.holdReplies();
        await waitFor(() => reads(mark).length === 2 + directoryReads, {
          what: () => `the directory reads (sent: ${reads(mark).length - 2})`,
        });
        const round2 = reads(mark).slice(2);
        if (multiRead) expect(round2).toEqual([{ op: ZK_OP.multiRead }]);
        else {
          expect(round2.every((r) => r.op === ZK_OP.getChildren2)).toBe(true);
          expect(new Set(round2.map((r) => r.path)).size).toBe(50);
        }
        // Round trip 3: the 60 node reads, once every directory is known, none answered yet.
        await waitFor(() => proxy.heldReplyBytes >= childrenReplyBytes(names.map((_, i) => (i < 10 ? 2 : 1))), {
          what: 'the 50 directory replies',
        });
        proxy.releaseReplies();
        proxy.holdReplies();
        await waitFor(() => reads(mark).length === 2 + directoryReads + nodeReads, {
          what: () => `the node reads (sent: ${reads(mark).length - 2 - directoryReads})`,
        });
        const round3 = reads(mark).slice(2 + directoryReads);
        expect(round3.every((r) => r.op === (multiRead ? ZK_OP.multiRead : ZK_OP.getData))).toBe(true);
        proxy.releaseReplies();
        const result = await listing;
        expect(reads(mark)).toHaveLength(2 + directoryReads + nodeReads); // nothing more

        const after = watcher.client.counter.snapshot();
        const sent = (op: string): number => (after[op] ?? 0) - (before[op] ?? 0);
        expect([sent('getChildren'), sent('getData'), sent('multiRead')]).toEqual(multiRead ? [2, 0, 2] : [52, 60, 0]);
        expect(result.map((lock) => lock.name)).toEqual(names);
        expect(result.map((lock) => [lock.holders.length, lock.waiters.length])).toEqual(
          names.map((_, i) => [1, i < 10 ? 1 : 0]),
        );

        await Promise.all(held.map((lock) => lock.release()));
        await Promise.all((await Promise.all(waits)).map((lock) => lock.release()));
      });

      it('a node released between the reads is left out, and a lock left with none is not listed', async () => {
        const [a, b] = await many(2);
        const gone = await a.acquire('gone');
        const holder = await a.acquire('stays');
        const waiting = b.acquire('stays', { timeoutMs: 20_000 });
        await fx.queued('stays', 2);

        const mark = proxy.requests.length;
        proxy.holdReplies();
        const listing = watcher.locks();
        await waitFor(() => reads(mark).length === 2, { what: 'the root read' });
        proxy.releaseReplies();
        proxy.holdReplies();
        await waitFor(() => reads(mark).length === (multiRead ? 3 : 4), { what: 'both directory reads' });
        // The server has answered both directory reads (held back); now the nodes go.
        await waitFor(() => proxy.heldReplyBytes >= childrenReplyBytes([1, 2]), { what: 'the directory replies' });
        await Promise.all([gone.release(), holder.release()]);
        // Gone in ZooKeeper before the node reads (a release answers once its delete is sent).
        await waitFor(
          async () =>
            (await fx.inspector.children(a.pathOf('gone'))) === null &&
            !(await fx.inspector.children(a.pathOf('stays')))?.includes(holder.path.split('/').at(-1)!),
          { what: 'both deletes done' },
        );
        proxy.releaseReplies();

        // 'stays' is listed as the directory read found it: the released holder left out,
        // the waiter as it stood then (not yet holding).
        expect(shape(await listing)).toEqual([['stays', [['write', b.options.identity, false]]]]);
        await (await waiting).release();
      });
    });

    it('is answered from the same session that holds locks, without disturbing them', async () => {
      const [a] = await many(1);
      const lock = (await a.acquire('self', { revocable: true })) as ZkLockHandle;
      const listing = await a.locks();
      expect(listing.map((l) => [l.name, l.holders.map((h) => h.node)])).toEqual([
        ['self', [lock.path.slice(lock.path.lastIndexOf('/') + 1)]],
      ]);
      expect(lock.isHeld()).toBe(true);
      expect(lock.revocation.aborted).toBe(false);
      await lock.release();
    });
  },
);
