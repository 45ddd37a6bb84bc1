import { ReentrantLocker, runOnce, type ZkLockBackend } from '../../lib/index';
import { jobRecordName } from '../../lib/core/port/job-record';
import { runOnceRecordName } from '../../lib/core/run-once/run-once';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { zkPort } from '../support/zk-test-env';

/**
 * A record write whose first try committed but whose answer was lost (the connection cut
 * right after the server acted on it) is tried again once the client reconnects, on the
 * same session: the retry meets its own write, and must not count it as another's.
 */
describe('a record write retried after its answer was lost', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let direct: ZkLockBackend;
  let client: ZkLockBackend;
  beforeAll(async () => {
    fx = await LockFixture.create('record-write-retry');
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    direct = await fx.backend();
    client = await fx.backend({ connectionString: proxy.connectionString });
  });
  afterAll(async () => {
    await fx.cleanup();
    await proxy.stop();
  });

  /** The requests of op `op` the proxy passed on since `from`. */
  const sent = (op: number, from: number): number => proxy.requests.slice(from).filter((r) => r.op === op).length;

  it("a job's run: listed once, not appended again over its own first try", async () => {
    const locker = new ReentrantLocker(client, 10_000);
    const job = { maxHoldMs: 60_000 } as const; // a job call: its runs are recorded
    await locker.withLock('nightly', () => 'first', job);
    const first = await direct.readRecord(jobRecordName('nightly'));
    expect(first?.version).toBe(0);

    const sessionId = client.client.session.id;
    const from = proxy.requests.length;
    const cut = proxy.cutAfter(ZK_OP.setData); // the versioned write of the second run's end
    await locker.withLock('nightly', () => 'second', job);
    await cut;
    expect(sent(ZK_OP.setData, from)).toBeGreaterThanOrEqual(2); // tried again after the reconnect

    const record = await direct.readRecord(jobRecordName('nightly'));
    expect(record?.version).toBe(1); // one write of the second run: the first try's
    const runs = record?.data.runs as Array<{ outcome: string }>;
    expect(runs).toHaveLength(2);
    expect(runs.map((run) => run.outcome)).toEqual(['ok', 'ok']);
    expect(client.client.session.id).toBe(sessionId);
    expect((await fx.nodes('nightly')) ?? []).toEqual([]);
  });

  it("runOnce's completion: the retry finds its own record (its runId) and resolves true", async () => {
    const from = proxy.requests.length;
    const cut = proxy.cutAfter(ZK_OP.multi); // the completion, in one transaction with the lock's check
    expect(await runOnce(client, 'migrate', () => undefined, { by: 'me' })).toBe(true);
    await cut;
    expect(sent(ZK_OP.multi, from)).toBe(2);
    const record = await direct.readRecord(runOnceRecordName('migrate'));
    expect(record).toMatchObject({ version: 0, data: { by: 'me', outcome: 'done', runId: expect.any(String) } });
    expect(await runOnce(direct, 'migrate', () => undefined)).toBe(false);
    expect((await fx.nodes('migrate')) ?? []).toEqual([]);
  });
});
