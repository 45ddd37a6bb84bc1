import type { ChildProcess } from 'node:child_process';

import { StaleFencingTokenError } from '../../lib';
import { PgFence } from '../../lib/postgres';
import { redisKeyOf, zkLockDirOf } from '../../bench/peers/locks/lock-keys';
import { openPeer } from '../../bench/peers/locks/open-peer';
import { PEER_IDS, type PeerConfig, type PeerId } from '../../bench/peers/peer-lock';
import { PeerWorker } from '../../bench/peers/peer-worker';
import { ROUND_TRIPS_WAITED } from '../../bench/peers/speed/speed-report';
import { DelayProxy } from '../../bench/support/delay-proxy';
import { nsBetween } from '../../bench/support/sample-stats';
import type { HoldEvent } from '../../bench/peers/peer-worker.protocol';
import { overlaps, type Section } from '../support/grant-intervals.checks';
import { PgFixture, pgUrl } from '../support/postgres/pg-test-env';
import { RedisServer } from '../support/redis/redis-server';
import { waitUntil } from '../support/wait-until';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { zkConnect } from '../support/zk-test-env';

const CYCLES = 8;
const HOLD_MS = 5;

/**
 * Every compared lock of the peers pass, each in worker processes on real servers (Redis
 * from Debian, the test ZooKeeper, the test PostgreSQL): two clients looping on one key
 * are never inside at once and both get the lock; a holder's writes land; the lock's
 * trace (a Redis key, ZooKeeper nodes) is gone after the release; and ours's token fences.
 */
describe('peer locks', () => {
  const redis = [new RedisServer(), new RedisServer(), new RedisServer()];
  const workers: PeerWorker[] = [];
  let pg: PgFixture;
  let fence: PgFence;
  let zk: ZkInspector;
  let fenceTable: string;
  let dataTable: string;

  beforeAll(async () => {
    await Promise.all(redis.map((server) => server.start()));
    pg = await PgFixture.create('peer_locks');
    fenceTable = pg.table('fence');
    dataTable = pg.table('data');
    fence = new PgFence(pg.admin, { table: fenceTable });
    await fence.install();
    await pg.admin.query(`CREATE TABLE ${dataTable} (id text PRIMARY KEY, n int NOT NULL DEFAULT 0, last text)`);
    zk = await ZkInspector.connect(zkConnect());
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await zk?.close();
    await pg?.cleanup();
    await Promise.all(redis.map((server) => server.destroy()));
  });

  const serversOf = (id: PeerId): RedisServer[] => (id === 'redlock-3' ? redis : id === 'ours' ? [] : [redis[0]]);
  const configOf = (id: PeerId, more: Partial<PeerConfig> = {}): PeerConfig => ({
    id,
    endpoints: id === 'ours' ? [zkConnect()] : serversOf(id).map((server) => server.endpoint),
    acquireTimeoutMs: 10_000,
    ...more,
  });
  const startWorker = async (id: PeerId, more?: Partial<PeerConfig>): Promise<PeerWorker> => {
    const worker = await PeerWorker.start({ peer: configOf(id, more), pg: { url: pgUrl(), fenceTable, dataTable } });
    workers.push(worker);
    return worker;
  };
  /** Closes `worker`, which must exit by itself: its lock closed every connection and timer. */
  const closeCleanly = async (worker: PeerWorker): Promise<void> => {
    expect(await worker.close()).toEqual({ code: 0, signal: null });
  };

  /** Whether `key`'s lock is there now: its Redis key on each server of `id`, or ours's lock nodes. */
  const traces = async (id: PeerId, key: string): Promise<boolean[]> => {
    const redisKey = redisKeyOf(id, key);
    if (redisKey === undefined) return [((await zk.children(zkLockDirOf(key))) ?? []).length > 0];
    return Promise.all(serversOf(id).map(async (server) => (await server.command('EXISTS', redisKey)) === '1'));
  };

  /** Waits until nothing of `key`'s lock is left: its Redis key on each server, or ours's lock nodes. */
  const expectNoTrace = async (id: PeerId, key: string): Promise<void> => {
    const redisKey = redisKeyOf(id, key);
    if (redisKey === undefined) {
      const dir = zkLockDirOf(key);
      await waitUntil(async () => ((await zk.children(dir)) ?? []).length === 0, `no lock node under ${dir}`);
      return;
    }
    for (const server of serversOf(id)) expect(await server.command('EXISTS', redisKey)).toBe('0');
  };

  describe.each(PEER_IDS)('%s', (id) => {
    /** Two clients of the lock, each a process: both loop, the first also holds. */
    let pair: PeerWorker[] = [];
    beforeAll(async () => {
      pair = await Promise.all([startWorker(id), startWorker(id)]);
    });

    it('two workers looping on one key are never inside at once, both are granted, and the lock leaves no trace', async () => {
      const key = `loop-${id}`;
      const startAt = String(process.hrtime.bigint() + 200_000_000n);
      const done = await Promise.all(
        pair.map((worker) => worker.loop({ key, cycles: CYCLES, holdMs: HOLD_MS, startAt })),
      );

      const sections: Section[] = done.flatMap(({ cycles }, i) =>
        cycles.map((cycle) => ({
          holder: `worker ${i + 1}`,
          token: 0n,
          start: BigInt(cycle.grantedAt),
          end: BigInt(cycle.releasingAt),
        })),
      );
      expect(overlaps(sections)).toEqual([]);
      for (const { cycles, failures, firstFailure } of done) {
        expect({ failures, firstFailure }).toEqual({ failures: 0, firstFailure: undefined });
        expect(cycles).toHaveLength(CYCLES);
        for (const cycle of cycles) {
          const [requested, granted, releasing, finished] = [
            cycle.requestedAt,
            cycle.grantedAt,
            cycle.releasingAt,
            cycle.doneAt,
          ].map(BigInt);
          expect(requested <= granted && granted <= releasing && releasing <= finished).toBe(true);
        }
      }
      await expectNoTrace(id, key);
    });

    it('a hold writes while it holds, tells granted, releasing and hold-done, and leaves no trace', async () => {
      const key = `hold-${id}`;
      await pg.admin.query(`INSERT INTO ${dataTable} (id) VALUES ($1), ($2)`, [`${key}:fenced`, `${key}:unfenced`]);
      const streamed: HoldEvent[] = [];
      let held: Promise<boolean[]> | undefined;
      const events = await pair[0].hold({ key, holder: 'h1', workMs: 300, writeEveryMs: 100 }, (event) => {
        streamed.push(event);
        if (event.type === 'granted') held = traces(id, key);
      });
      // The lock was where lock-keys.ts says while it was held (so that "no trace" below means something):
      // on a majority of its servers (redlock is granted once two of three agree; the third may follow).
      const there = (await held)!;
      expect(there.filter(Boolean).length).toBeGreaterThan(there.length / 2);

      expect(streamed).toEqual(events);
      const types = events.map((event) => event.type);
      expect(types[0]).toBe('granted');
      expect(types.slice(-2)).toEqual(['releasing', 'hold-done']);
      expect(events.at(-1)).not.toHaveProperty('error');
      expect(types).not.toContain('told-lost');
      expect(types).not.toContain('stopped');
      const writes = events.filter((event) => event.type === 'write');
      expect(writes.every((write) => write.outcome === 'landed' && write.holder === 'h1')).toBe(true);

      // Only a lock with a token writes the fenced row (the protocol skips it for the others).
      const granted = events[0] as Extract<HoldEvent, { type: 'granted' }>;
      const fencedWrites = writes.filter((write) => write.row === 'fenced').length;
      const unfencedWrites = writes.filter((write) => write.row === 'unfenced').length;
      expect(unfencedWrites).toBeGreaterThan(0);
      expect(fencedWrites).toBe(id === 'ours' ? unfencedWrites : 0);
      expect(granted.token === undefined).toBe(id !== 'ours');
      const { rows } = await pg.admin.query<{ id: string; n: number; last: string | null }>(
        `SELECT id, n, last FROM ${dataTable} WHERE id LIKE $1 ORDER BY id`,
        [`${key}:%`],
      );
      expect(rows).toEqual([
        { id: `${key}:fenced`, n: fencedWrites, last: fencedWrites > 0 ? 'h1' : null },
        { id: `${key}:unfenced`, n: unfencedWrites, last: 'h1' },
      ]);
      await expectNoTrace(id, key);
    });

    it('closes: each worker exits by itself, every connection and timer of its lock closed', async () => {
      await Promise.all(pair.map(closeCleanly));
    });
  });

  /**
   * The peers page's "round trips waited" per cycle (ROUND_TRIPS_WAITED), measured: through
   * a delay far longer than the servers' and clients' own work, the fastest of a few
   * uncontended cycles takes that many round trips and less than one more.
   */
  it.each(PEER_IDS)(
    '%s: an uncontended cycle waits for as many round trips as the peers page says',
    async (id) => {
      const oneWayMs = 50;
      const rttMs = 2 * oneWayMs;
      const proxy = await DelayProxy.startMany([zkConnect(), ...redis.map((server) => server.endpoint)], oneWayMs);
      try {
        const [zkEndpoint, ...redisEndpoints] = proxy.endpoints;
        const endpoints = id === 'ours' ? [zkEndpoint] : id === 'redlock-3' ? redisEndpoints : [redisEndpoints[0]];
        const worker = await startWorker(id, { endpoints, acquireTimeoutMs: 30_000 });
        const { cycles, failures, firstFailure } = await worker.loop({ key: `rtt-${id}`, cycles: 6, holdMs: 0 });
        await closeCleanly(worker);
        expect({ failures, firstFailure, cycles: cycles.length }).toEqual({
          failures: 0,
          firstFailure: undefined,
          cycles: 6,
        });
        const fastestMs = Math.min(...cycles.map((cycle) => nsBetween(cycle.requestedAt, cycle.doneAt) / 1e6));
        // The fastest cycle is in the object, so a failure shows it.
        expect({ roundTrips: Math.floor(fastestMs / rttMs), fastestMs }).toMatchObject({
          roundTrips: ROUND_TRIPS_WAITED[id],
        });
      } finally {
        await proxy.stop();
      }
    },
    60_000,
  );

  const REDIS_PEERS = PEER_IDS.filter((id) => id !== 'ours');
  /** The Redis locks that tell a holder its lock is gone (redlock's signal, redis-semaphore's onLockLost). */
  const TELLING = new Set<PeerId>(['redlock-1', 'redlock-3', 'redis-semaphore']);

  it.each(REDIS_PEERS)(
    '%s: a holder whose Redis key vanishes is told and stops, if its lock tells at all',
    async (id) => {
      const key = `vanish-${id}`;
      const redisKey = redisKeyOf(id, key)!;
      await pg.admin.query(`INSERT INTO ${dataTable} (id) VALUES ($1), ($2)`, [`${key}:fenced`, `${key}:unfenced`]);
      // A short TTL, so the loss is noticed soon; a short acquire timeout, since redlock retries a failed
      // extension (and release) with the acquire's retries: it tells about 2 s after the extension began.
      const worker = await startWorker(id, { ttlMs: 1_000, acquireTimeoutMs: 2_000 });
      let deleted: Promise<string[]> | undefined;
      const events = await worker.hold({ key, holder: 'h1', workMs: 4_000, writeEveryMs: 100 }, (event) => {
        if (event.type === 'granted')
          deleted = Promise.all(serversOf(id).map((server) => server.command('DEL', redisKey)));
      });
      await closeCleanly(worker);
      // Deleted where it was: on every server, or for redlock-3 on a majority at the least (at
      // its grant the key may have reached only two of the three; the lock is gone either way).
      const servers = serversOf(id).length;
      expect((await deleted)!.filter((reply) => reply === '1').length).toBeGreaterThanOrEqual(
        Math.floor(servers / 2) + 1,
      );

      const types = events.map((event) => event.type);
      const writes = events.filter((event) => event.type === 'write');
      expect(writes.every((write) => write.outcome === 'landed' && write.row === 'unfenced')).toBe(true);
      expect(types.at(-1)).toBe('hold-done');
      if (TELLING.has(id)) {
        expect(types.filter((type) => type === 'told-lost')).toHaveLength(1);
        const told = events.find((event) => event.type === 'told-lost')!;
        expect(told).toMatchObject({ how: expect.stringMatching(/^signal aborted/) });
        // Told, it stops before its next write: after the telling, only the write already under way.
        const after = types.slice(types.indexOf('told-lost') + 1);
        expect(after.slice(-3)).toEqual(['stopped', 'releasing', 'hold-done']);
        expect(after.slice(0, -3).every((type) => type === 'write') && after.length <= 4).toBe(true);
      } else {
        // Never told: it writes on for the whole work, its lock gone; only its release fails.
        expect(types).not.toContain('told-lost');
        expect(writes.length).toBeGreaterThanOrEqual(30);
        expect(events.at(-1)).toHaveProperty('error');
      }
    },
  );

  it("ours: a holder's fenced writes are refused once the store saw a newer token; its unfenced ones land", async () => {
    const key = 'refused-ours';
    await pg.admin.query(`INSERT INTO ${dataTable} (id) VALUES ($1), ($2)`, [`${key}:fenced`, `${key}:unfenced`]);
    // A token far above any this ZooKeeper will hand out soon, as if a later holder had written.
    const client = await pg.admin.connect();
    try {
      await client.query('BEGIN');
      await fence.check(client, key, 1n << 60n);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const worker = await startWorker('ours');
    const events = await worker.hold({ key, holder: 'h1', workMs: 250, writeEveryMs: 100 });
    await closeCleanly(worker);
    const writes = events.filter((event) => event.type === 'write');
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) expect(write.outcome).toBe(write.row === 'fenced' ? 'refused' : 'landed');
    const { rows } = await pg.admin.query<{ id: string; n: number }>(
      `SELECT id, n FROM ${dataTable} WHERE id LIKE $1 ORDER BY id`,
      [`${key}:%`],
    );
    expect(rows).toEqual([
      { id: `${key}:fenced`, n: 0 },
      { id: `${key}:unfenced`, n: writes.length / 2 },
    ]);
  });

  it('a worker whose parent is gone (its IPC channel closed, no close sent) exits, and its lock is freed', async () => {
    const key = 'orphan';
    const orphan = await startWorker('redis-semaphore');
    // A write (and an event sent) every 2 ms: a send that comes after the channel closed and
    // before the worker reads its end fails (EPIPE), and that too means the parent is gone.
    const holding = orphan.hold({ key, holder: 'orphan', workMs: 60_000, writeEveryMs: 2 }).catch(() => undefined);
    await waitUntil(async () => (await traces('redis-semaphore', key)).every(Boolean), 'the orphan holds');
    // What a benchmark that crashed leaves: the channel closes, nobody sends `close`.
    (orphan as unknown as { child: ChildProcess }).child.disconnect();
    expect(await orphan.exited).toEqual({ code: 3, signal: null });
    await holding;
    // Its connection went with it; the key goes with its TTL at the latest (10 s by default).
    await waitUntil(async () => !(await traces('redis-semaphore', key)).some(Boolean), 'the key gone', 20_000);
  }, 40_000);

  it("ours: the hold's token is a bigint, and the fence refuses a write with an older one", async () => {
    const key = 'fenced-ours';
    const peer = await openPeer(configOf('ours'));
    let token: bigint | undefined;
    try {
      token = await peer.run(key, async (hold) => hold.token);
    } finally {
      await peer.close();
    }
    expect(typeof token).toBe('bigint');
    const client = await pg.admin.connect();
    try {
      await client.query('BEGIN');
      await fence.check(client, key, token!);
      await client.query('COMMIT');
      await client.query('BEGIN');
      await expect(fence.check(client, key, token! - 1n)).rejects.toBeInstanceOf(StaleFencingTokenError);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await expectNoTrace('ours', key);
  });
});
