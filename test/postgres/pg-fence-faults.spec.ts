import type { Pool, PoolClient } from 'pg';

import { LeaderElection, LockLostError, StaleFencingTokenError, type ZkLockBackend } from '../../lib/index';
import { PgFence } from '../../lib/postgres/index';
import { LockFixture } from '../support/lock-fixture';
import { PgFixture, pgUrl } from '../support/postgres/pg-test-env';
import { runWorker } from '../support/run-worker';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { zkConnect, zkPort } from '../support/zk-test-env';

/**
 * What only the store can stop: a holder that goes on writing after a newer holder was
 * granted, because it was cut off (a zombie), paused (SIGSTOP between its check and its
 * write), or deposed as leader. PostgreSQL refuses its write through the fence, and the
 * rows keep the newer holder's. And fencing refuses nobody who holds the lock.
 */
describe('PgFence refuses the writes of holders that lost their lock', () => {
  let fx: LockFixture;
  let pg: PgFixture;
  let pool: Pool;
  let fence: PgFence<Pool>;
  let fenceTable: string;
  let dataTable: string;
  const proxies: TcpProxy[] = [];
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fx = await LockFixture.create('pg-fence-faults');
    pg = await PgFixture.create('pg_fence_faults');
    pool = pg.pool();
    fenceTable = pg.table('fence');
    dataTable = pg.table('data');
    fence = new PgFence(pool, { table: fenceTable });
    await fence.install();
    await pool.query(`CREATE TABLE ${dataTable} (id text PRIMARY KEY, value text, n int NOT NULL DEFAULT 0)`);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill()));
    await fx.cleanup();
    await Promise.all(proxies.map((proxy) => proxy.stop()));
    await pg.cleanup();
  });

  /** A lock client whose connection to ZooKeeper the test can cut silently. */
  async function cuttable(): Promise<[ZkLockBackend, TcpProxy]> {
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    proxies.push(proxy);
    return [await fx.backend({ connectionString: proxy.connectionString }), proxy];
  }

  const row = async (id: string): Promise<{ value: string | null; n: number } | undefined> =>
    (await pool.query<{ value: string | null; n: number }>(`SELECT value, n FROM ${dataTable} WHERE id = $1`, [id]))
      .rows[0];
  const write = (id: string, value: string) => (client: Pool | PoolClient) =>
    client.query(`UPDATE ${dataTable} SET value = $2 WHERE id = $1`, [id, value]);

  /** The zombie's write as it would go, without looking at its lock again: BEGIN, check, UPDATE, COMMIT. */
  async function writeAsZombie(id: string, token: bigint): Promise<unknown> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await fence.check(client, id, token);
      await write(id, 'zombie')(client);
      await client.query('COMMIT');
      return 'wrote';
    } catch (error) {
      await client.query('ROLLBACK');
      return error;
    } finally {
      client.release();
    }
  }

  it('a zombie: cut off from ZooKeeper by a silent proxy, its write after the next holder wrote is refused', async () => {
    await pool.query(`INSERT INTO ${dataTable} (id, value) VALUES ('zombie', 'initial')`);
    const [cutOff, proxy] = await cuttable();
    const [next] = await fx.many(1);
    const zombie = await cutOff.acquire('zombie');
    zombie.assertHeld();
    const waiting = next.acquire('zombie', { timeoutMs: 60_000 });
    await fx.queued('zombie', 2);

    proxy.blackhole(); // no FIN, no RST: the server expires the session, the holder hears nothing
    const newer = await waiting;
    await fence.transaction(newer, write('zombie', 'newer holder'));

    const refused = await writeAsZombie('zombie', zombie.fencingToken);
    expect(refused).toBeInstanceOf(StaleFencingTokenError);
    expect(refused).toMatchObject({ token: zombie.fencingToken, highestSeen: newer.fencingToken });
    // Through transaction() it does not even begin: its own signal has aborted by now.
    await expect(fence.transaction(zombie, write('zombie', 'zombie'))).rejects.toBeInstanceOf(LockLostError);
    expect(await row('zombie')).toMatchObject({ value: 'newer holder' });
    expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'zombie', token: String(newer.fencingToken) });
    await newer.release();
    proxy.heal();
    await zombie.release();
  });

  it('a pause: a holder stopped after its assertHeld() and before its write, resumed after the next holder wrote, is refused', async () => {
    await pool.query(`INSERT INTO ${dataTable} (id, value) VALUES ('paused', 'initial')`);
    const paused = WorkerProcess.spawn('pg-fenced.worker.ts', {
      mode: 'pause',
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      name: 'paused',
      sessionTimeoutMs: 3000,
      pgUrl: pgUrl(),
      fenceTable,
      dataTable,
    });
    workers.push(paused);
    const checked = JSON.parse(await paused.line((line) => line.includes('"checked"'), 'checked', 30_000)) as {
      token: string;
    };
    paused.signal('SIGSTOP');
    await waitUntil(() => paused.state() === 'T', 'the holder to be stopped');

    const [next] = await fx.many(1);
    const newer = await next.acquire('paused', { timeoutMs: 60_000 }); // once the stopped holder's session expired
    expect(newer.fencingToken).toBeGreaterThan(BigInt(checked.token));
    await fence.transaction(newer, write('paused', 'newer holder'));
    await newer.release();

    paused.signal('SIGCONT');
    paused.signal('SIGUSR2');
    const outcome = JSON.parse(await paused.line((line) => /"(wrote|refused)"/.test(line), 'its write', 30_000)) as {
      event: string;
      highestSeen?: string;
    };
    expect(outcome).toEqual({ event: 'refused', token: checked.token, highestSeen: String(newer.fencingToken) });
    expect(await paused.exited).toEqual({ code: 0, signal: null });
    expect(await row('paused')).toMatchObject({ value: 'newer holder' });
    expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'paused', token: String(newer.fencingToken) });
  });

  it('a deposed leader: its write after the next leader wrote is refused', async () => {
    await pool.query(`INSERT INTO ${dataTable} (id, value) VALUES ('reports', 'initial')`);
    const [cutOff, proxy] = await cuttable();
    const [other] = await fx.many(1);
    const deposed = new LeaderElection(cutOff, 'reports');
    const successor = new LeaderElection(other, 'reports');
    try {
      deposed.start();
      await waitUntil(() => deposed.isLeader, 'the first candidate to lead');
      const oldTerm = deposed.term!;
      successor.start();
      await fx.queued('leader:reports', 2);

      proxy.blackhole();
      await waitUntil(() => successor.isLeader, 'the second candidate to lead', 60_000);
      const term = successor.term!;
      await fence.transaction(term, write('reports', 'new leader'));

      const refused = await writeAsZombie('reports', oldTerm.fencingToken);
      expect(refused).toBeInstanceOf(StaleFencingTokenError);
      expect(refused).toMatchObject({ resource: 'reports', highestSeen: term.fencingToken });
      await expect(fence.transaction(oldTerm, write('reports', 'zombie'))).rejects.toBeInstanceOf(LockLostError);
      expect(await row('reports')).toMatchObject({ value: 'new leader' });
      expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'reports', token: String(term.fencingToken) });
    } finally {
      proxy.heal();
      await Promise.all([deposed.stop(), successor.stop()]);
    }
  });

  it('three processes × 50 fenced increments: the exact count, none refused', async () => {
    await pool.query(`INSERT INTO ${dataTable} (id, n) VALUES ('counter', 0)`);
    const reports = await Promise.all(
      Array.from({ length: 3 }, () =>
        runWorker<{ stored: number; refused: number; tokens: string[] }>('pg-fenced.worker.ts', {
          mode: 'increment',
          connectionString: zkConnect(),
          rootPath: fx.rootPath,
          name: 'counter',
          sessionTimeoutMs: 4000,
          pgUrl: pgUrl(),
          fenceTable,
          dataTable,
          count: 50,
        }),
      ),
    );
    expect(reports.map(({ stored, refused }) => [stored, refused])).toEqual([
      [50, 0],
      [50, 0],
      [50, 0],
    ]);
    expect(await row('counter')).toMatchObject({ n: 150 });
    const tokens = reports.flatMap((report) => report.tokens.map(BigInt));
    expect(new Set(tokens).size).toBe(150);
    const highest = tokens.reduce((a, b) => (a > b ? a : b));
    expect(await pg.rows(fenceTable)).toContainEqual({ resource: 'counter', token: String(highest) });
  });
});
