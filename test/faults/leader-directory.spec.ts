import { LeaderElection, type LeaderInfo, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { zkConnect } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;

interface WorkerEvent {
  readonly t: number;
  readonly event: string;
  readonly [field: string]: unknown;
}

const parse = (line: string): WorkerEvent => JSON.parse(line) as WorkerEvent;
const isEvent = (event: string) => (line: string) => parse(line).event === event;

describe('the leader directory across processes: observe and proclaim through a failover', () => {
  let fx: LockFixture;
  let observerBackend: ZkLockBackend;
  const workers: WorkerProcess[] = [];
  const unsubscribes: Array<() => void> = [];
  beforeAll(async () => {
    fx = await LockFixture.create('leader-directory');
    observerBackend = await fx.backend();
  });
  afterEach(async () => {
    unsubscribes.splice(0).forEach((unsubscribe) => unsubscribe());
    await Promise.all(workers.splice(0).map((worker) => worker.kill()));
  });
  afterAll(() => fx.cleanup());

  /** A candidate process for `group`'s leadership, proclaiming `value` at each term it wins. */
  function candidate(group: string, identity: string, value: string): WorkerProcess {
    const worker = WorkerProcess.spawn('member.worker.ts', {
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      sessionTimeoutMs: SESSION_MS,
      identity,
      leaderGroup: group,
      proclaim: value,
    });
    workers.push(worker);
    return worker;
  }

  /** A pure observer in this process (it never runs), with everything it was told. */
  function observe(group: string): Array<LeaderInfo | null> {
    const seen: Array<LeaderInfo | null> = [];
    unsubscribes.push(new LeaderElection(observerBackend, group, { retryDelayMs: 50 }).observe((x) => seen.push(x)));
    return seen;
  }

  it('the old leader killed: observers see null or the new leader, never the old one with a newer token; each value only with its own term', async () => {
    const group = 'failover';
    const seen = observe(group);
    const a = candidate(group, 'leader-a', 'value-a');
    // Not leading yet: proclaim is refused, and nothing is written.
    expect(parse(await a.line(isEvent('refused'), 'refused')).code).toBe('NOT_LEADER');
    const tokenA = BigInt(parse(await a.line(isEvent('leading'), 'a leads')).token as string);
    await a.line(isEvent('proclaimed'), 'a proclaimed');
    const b = candidate(group, 'leader-b', 'value-b');
    expect(parse(await b.line(isEvent('refused'), 'b refused')).code).toBe('NOT_LEADER');
    await fx.queued(`leader:${group}`, 2);
    await waitUntil(() => seen.at(-1)?.value === 'value-a', 'the observer sees a and its value');
    // ZooKeeper's own state: the term record names a's lock node and token.
    const record = JSON.parse((await fx.inspector.data(`${fx.rootPath}-records/leader:${group}`))!) as {
      node: string;
      token: string;
    };
    expect(record).toEqual({ node: seen.at(-1)!.node, token: String(tokenA), value: 'value-a' });
    expect(await fx.nodes(`leader:${group}`)).toContain(record.node);

    await a.kill(); // b leads once a's session expires
    const tokenB = BigInt(parse(await b.line(isEvent('leading'), 'b leads', 3 * SESSION_MS)).token as string);
    await b.line(isEvent('proclaimed'), 'b proclaimed');
    await waitUntil(() => seen.at(-1)?.value === 'value-b', 'the observer sees b and its value');

    expect(tokenB > tokenA).toBe(true);
    const told = seen.filter((x): x is LeaderInfo => x !== null);
    for (const leader of told) {
      // Each identity only ever with its own term's token, and each value only with its own term.
      const own = { 'leader-a': [tokenA, 'value-a'], 'leader-b': [tokenB, 'value-b'] }[leader.leader as string]!;
      expect(leader.fencingToken).toBe(own[0]);
      expect([null, own[1]]).toContain(leader.value);
    }
    const tokens = told.map((leader) => leader.fencingToken);
    expect(tokens).toEqual([...tokens].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))); // they only rise
    expect(told.at(-1)).toMatchObject({ group, leader: 'leader-b', fencingToken: tokenB, value: 'value-b' });
    const now = JSON.parse((await fx.inspector.data(`${fx.rootPath}-records/leader:${group}`))!) as { token: string };
    expect(now.token).toBe(String(tokenB));
  });

  it('a record left by an earlier term is never shown for the next leader (the getLeader race, CURATOR-358)', async () => {
    const group = 'stale-record';
    const [first, second] = await fx.many(2);
    const a = new LeaderElection(first, group);
    a.start();
    await waitUntil(() => a.isLeader, 'a leads');
    await a.proclaim('from-a');
    // b's record writes wait for the gate: b leads while the record is still a's term's.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const b = new LeaderElection(heldWrites(second, gate), group);
    b.start();
    await fx.queued(`leader:${group}`, 2);
    await a.stop();
    await waitUntil(() => b.isLeader, 'b leads');
    const stale = JSON.parse((await fx.inspector.data(`${fx.rootPath}-records/leader:${group}`))!) as { value: string };
    expect(stale.value).toBe('from-a'); // a's record is still there...
    expect(await readOnce(observerBackend, group)).toBeNull(); // ...and shown for nobody: b has not written its own
    open();
    await waitUntil(async () => (await readOnce(observerBackend, group))?.fencingToken === b.fencingToken, 'b seen');
    expect(await readOnce(observerBackend, group)).toMatchObject({ fencingToken: b.fencingToken, value: null });
    await b.stop();
  });
});

/** One read of who leads `group`: the first thing an observer is told. */
async function readOnce(backend: ZkLockBackend, group: string): Promise<LeaderInfo | null> {
  let unsubscribe!: () => void;
  const first = await new Promise<LeaderInfo | null>((resolve) => {
    unsubscribe = new LeaderElection(backend, group).observe(resolve);
  });
  unsubscribe();
  return first;
}

/** `backend` whose `writeRecord` calls wait for `gate` first. */
function heldWrites(backend: ZkLockBackend, gate: Promise<void>): ZkLockBackend {
  return new Proxy(backend, {
    get(target, key) {
      if (key === 'writeRecord')
        return async (...args: Parameters<ZkLockBackend['writeRecord']>) => {
          await gate;
          return target.writeRecord(...args);
        };
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
