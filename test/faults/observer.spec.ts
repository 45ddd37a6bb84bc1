import { ZkServerRefusedError } from '../../lib/index';
import { cutWhileHolding, expectToldBeforeGrant, serverOf, suiteClients } from '../support/cut-while-holding';
import { uniqueRoot } from '../support/zk-test-env';
import { fourLetter } from '../support/zookeeper/four-letter';
import { OldServerProxy } from '../support/zookeeper/old-server.proxy';
import { PartitionableEnsemble } from '../support/zookeeper/partitionable-ensemble';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const TICK_MS = 200;
const SESSION_MS = 3000;
const OBSERVER = 3;

/**
 * An observer behind an observer master (ZooKeeper 3.6+): its clients' session touches
 * reach the leader one ping later than a follower's, which the liveness proof's pair gap
 * does not cover (docs/fencing.md). The client asks each server `srvr` and leaves one that
 * says `Mode: observer`; one that cannot say is used, and a holder on it cut off with its
 * observer is still told before the majority grants.
 */
describe('observers (behind an observer master), and holders on them', () => {
  let ensemble: PartitionableEnsemble;
  const { connect, closeAll } = suiteClients(uniqueRoot('observer'), SESSION_MS);
  const strings = (...servers: number[]) => servers.map((i) => ensemble.clientConnect(i)).join(',');

  beforeAll(async () => {
    ensemble = await PartitionableEnsemble.start({ tickTime: TICK_MS, observer: 'observer-master' });
  });

  afterEach(async () => {
    for (const i of [0, 1, 2, OBSERVER]) ensemble.heal(i);
    await closeAll();
    await Promise.all(ensemble.servers.map((s) => s.waitServing()));
  });

  afterAll(() => ensemble?.destroy());

  it('the observer follows a follower (its observer master), not the leader', async () => {
    const leader = await ensemble.leader();
    expect(await ensemble.mode(OBSERVER)).toBe('observer');
    const synced = async (i: number, what: string) =>
      new RegExp(`^zk_synced_${what}\\s+(\\d+)`, 'm').exec(await fourLetter(ensemble.servers[i].clientPort, 'mntr'));
    expect((await synced(leader, 'observers'))?.[1]).toBe('0');
    const masters = await Promise.all([0, 1, 2].map(async (i) => (await synced(i, 'observers'))?.[1]));
    expect(masters.filter((n) => n === '1')).toHaveLength(1);
    for (const i of [0, 1, 2, OBSERVER]) expect(ensemble.bypasses(i)).toEqual([]);
  });

  it('a string naming only the observer: start fails with a ZkServerRefusedError naming it', async () => {
    const startedAt = performance.now();
    const failed = await connect(strings(OBSERVER)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ZkServerRefusedError);
    expect(failed).toMatchObject({
      server: ensemble.clientConnect(OBSERVER),
      unfitness: { reason: 'observer' },
      code: 'ZK_CONNECTION',
    });
    expect((failed as Error).message).toMatch(/is an observer.*Name the ensemble's voting members/);
    expect(performance.now() - startedAt).toBeLessThan(10_000); // not the whole connect timeout
  });

  it('a holder whose only other server is the observer does not move there when its follower is cut off: it aborts before the majority grants', async () => {
    // The other follower: the observer itself must still serve.
    const leader = await ensemble.leader();
    const follower = [0, 1, 2].find((i) => i !== leader && i !== ensemble.observerMaster)!;
    const majority = [0, 1, 2].filter((i) => i !== follower);
    // The string names the observer too: whichever the client tries first, it holds on the follower.
    const holder = await connect(strings(OBSERVER, follower));
    expect(await serverOf(ensemble.servers, holder)).toBe(follower);
    // The client may have tried the observer first as it started (refused then, and said
    // once per server and session): count that, and any refusal from now on.
    const observer = ensemble.clientConnect(OBSERVER);
    const refusals: string[] = holder.client.session.refusal ? [holder.client.session.refusal.server] : [];
    holder.client.on('server-refused', (_: unknown, error: ZkServerRefusedError) => refusals.push(error.server));
    const checkedOnObserver: string[] = [];
    holder.client.on('server-checked', (_: unknown, server: string) => {
      if (server === observer) checkedOnObserver.push(server);
    });
    const waiter = await connect(strings(...majority));
    const inspector = await ZkInspector.connect(strings(...majority));
    try {
      // Re-attaching through the observer keeps the session alive at the leader: the lock goes
      // when its holder, told, releases (deleted through the observer as it re-attaches there).
      const outcome = await cutWhileHolding(holder, waiter, inspector, 'job', () => ensemble.isolate(follower), {
        releaseWhenTold: true,
      });
      expect(refusals).toContain(observer);
      expect(checkedOnObserver).toEqual([]); // never passed the check there: it held through no observer
      await expectToldBeforeGrant(outcome, inspector);
      await outcome.lock.release();
    } finally {
      await inspector.close();
    }
  });

  it('a holder on the observer, where it cannot tell (no srvr): cut off with its observer, it aborts before the majority grants', async () => {
    // The client reaches the observer through a proxy that refuses srvr, as a whitelist without it would.
    const proxy = new OldServerProxy(ensemble.servers[OBSERVER].clientPort, {
      reply: 'srvr is not executed because it is not in the whitelist.\n',
    });
    await proxy.start();
    const leader = await ensemble.leader();
    try {
      const holder = await connect(proxy.connectionString);
      expect(await serverOf(ensemble.servers, holder)).toBe(OBSERVER);
      const waiter = await connect(strings(0, 1, 2));
      const inspector = await ZkInspector.connect(strings(leader));
      try {
        // From its observer master and the leader alike.
        const outcome = await cutWhileHolding(holder, waiter, inspector, 'job', () => ensemble.isolate(OBSERVER));
        const { cutAt, abortedAt, grantedAt } = outcome;
        await expectToldBeforeGrant(outcome, inspector);
        expect(abortedAt - cutAt).toBeLessThan(SESSION_MS);
        console.log(
          `observer: abort at +${Math.round(abortedAt - cutAt)} ms, grant at +${Math.round(grantedAt - cutAt)} ms`,
        );
        await outcome.lock.release();
      } finally {
        await inspector.close();
      }
    } finally {
      await closeAll();
      await proxy.stop();
    }
  });
});
