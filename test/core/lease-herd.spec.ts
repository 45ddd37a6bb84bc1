import type { ZkLockBackend } from '../../lib/index';
import type { ZkLeaseHandle } from '../../lib/core/zookeeper/lease';
import { LockFixture } from '../support/lock-fixture';
import { countsSince } from '../support/request-counts';
import { waitUntil } from '../support/wait-until';
import { fourLetter } from '../support/zookeeper/four-letter';
import { zkPort } from '../support/zk-test-env';

const seq = (node: string): number => Number(node.slice(-10));
const leafOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** ZooKeeper's watch table (`wchc`): for each path under `prefix`, the sessions (hex ids) watching it. */
async function watchers(prefix: string): Promise<Map<string, string[]>> {
  const table = new Map<string, string[]>();
  let session = '';
  for (const line of (await fourLetter(zkPort(), 'wchc')).split('\n')) {
    if (/^0x[0-9a-f]+$/i.test(line)) session = BigInt(line).toString(16);
    else if (line.startsWith('\t') && line.trim().startsWith(prefix))
      table.set(line.trim(), [...(table.get(line.trim()) ?? []), session]);
  }
  return table;
}

const sessionOf = (client: ZkLockBackend): string => BigInt(`0x${client.client.session.id}`).toString(16);

/** A waiter: its call, and whether it was granted yet. */
interface Waiter {
  readonly client: ZkLockBackend;
  readonly lease: Promise<ZkLeaseHandle>;
  granted: boolean;
}

/**
 * The wake-up rule under the cases that break a naive semaphore: holders leaving in any
 * order, waiters giving up between others. Who watches what is read from ZooKeeper's own
 * watch table, and grants are checked against maxLeases at every step.
 */
describe('leases: no herd and no missed wake-up', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('lease-herd')));
  afterAll(() => fx.cleanup());

  /** Lease nodes of `name`, in queue order. */
  const queue = async (name: string): Promise<string[]> =>
    ((await fx.nodes(name)) ?? []).sort((a, b) => seq(a) - seq(b));

  /** Queues a waiter on `name`, strictly after those queued before (so the order is known). */
  async function wait(
    client: ZkLockBackend,
    name: string,
    maxLeases: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<Waiter> {
    const before = (await fx.nodes(name))?.length ?? 0;
    const waiter: Waiter = { client, granted: false, lease: undefined as never };
    (waiter as { lease: Promise<ZkLeaseHandle> }).lease = client
      .acquireLease(name, { maxLeases, timeoutMs: 20_000, ...options })
      .then((lease) => {
        waiter.granted = true;
        return lease;
      });
    waiter.lease.catch(() => undefined);
    await fx.queued(name, before + 1);
    return waiter;
  }

  /**
   * Which clients ZooKeeper notifies of a change to `dir`'s children: a probe child is
   * created; each client then makes a read, whose reply comes after any notification the
   * server sent it (ZooKeeper's order on a connection). `wchc` lists data watches only, so
   * children watches are seen this way, by what the server sends.
   */
  async function childWatchers(dir: string, clients: readonly ZkLockBackend[]): Promise<ZkLockBackend[]> {
    const before = clients.map((c) => c.client.counter.snapshot().notification ?? 0);
    const probe = `${dir}/probe-${++probes}`;
    await fx.inspector.create(probe);
    await Promise.all(clients.map((c) => c.client.session.exists(dir)));
    const woken = clients.filter((c, i) => (c.client.counter.snapshot().notification ?? 0) > before[i]);
    await fx.inspector.removeTree(probe);
    return woken;
  }
  let probes = 0;
  const grantCosts = new Map<number, Record<string, number>>();

  /** Requests a client sent that change or read the queue (not its liveness heartbeat). */
  const queueRequests = (client: ZkLockBackend): number => {
    const counts = client.client.counter.snapshot();
    return ['create', 'getChildren', 'getData', 'setData', 'remove'].reduce((sum, op) => sum + (counts[op] ?? 0), 0);
  };

  /** Waits until `client` waits on exactly one watch with no request of the queue's in flight. */
  async function idle(client: ZkLockBackend): Promise<void> {
    const session = client.client.session;
    await waitUntil(async () => {
      const sent = queueRequests(client);
      if (session.watcherCount() !== 1) return false;
      await session.exists('/'); // answered after anything it sent before (one connection, in order)
      return session.watcherCount() === 1 && queueRequests(client) === sent;
    }, 'the client to wait on its watch');
  }

  /**
   * Waits for the steady state: each waiter behind the head has a data watch on the node
   * just ahead (plus the `stale` watches a waiter that gave up leaves, each until that node
   * changes), and the head, and only the head, watches the children. `clientOf` maps every
   * node to its client.
   */
  async function settled(
    name: string,
    dir: string,
    maxLeases: number,
    clientOf: Map<string, ZkLockBackend>,
    stale = new Map<string, ZkLockBackend>(),
    probe = true,
  ): Promise<void> {
    const waiting = (await queue(name)).slice(maxLeases);
    await waitUntil(async () => {
      const table = await watchers(dir);
      const expected = new Map<string, string[]>();
      for (let i = 1; i < waiting.length; i++)
        expected.set(`${dir}/${waiting[i - 1]}`, [sessionOf(clientOf.get(waiting[i])!)]);
      for (const [node, client] of stale)
        expected.set(`${dir}/${node}`, [...(expected.get(`${dir}/${node}`) ?? []), sessionOf(client)]);
      const sorted = (table: Map<string, string[]>): string =>
        JSON.stringify([...table].map(([path, sessions]) => [path, [...sessions].sort()]).sort());
      return sorted(table) === sorted(expected);
    }, `the data watches on ${name} to settle`);
    if (waiting.length === 0) return;
    const head = clientOf.get(waiting[0])!;
    if (!probe) return idle(head);
    const intruders = new Set<ZkLockBackend>();
    await waitUntil(async () => {
      await idle(head);
      const woken = await childWatchers(dir, [...new Set(clientOf.values())]);
      for (const client of woken) if (client !== head) intruders.add(client);
      return woken.includes(head);
    }, `the head of ${name} to watch its children`);
    // Besides the head, only a holder is told, once: the watch the read that granted it set
    // as head (one-shot, so the probe used it up). Then nobody but the head is.
    const holders = new Set((await queue(name)).slice(0, maxLeases).map((node) => clientOf.get(node)));
    expect([...intruders].filter((client) => !holders.has(client))).toEqual([]);
    await idle(head); // the probe woke it: back on its watch before anything else happens
    expect(await childWatchers(dir, [...new Set(clientOf.values())])).toEqual([head]);
    await idle(head);
  }

  it('holders are watched by nobody, the head watches the children, every later waiter the node just ahead', async () => {
    const clients = await fx.many(7);
    const dir = clients[0].pathOf('shape');
    const holders = [
      await clients[0].acquireLease('shape', { maxLeases: 2 }),
      await clients[1].acquireLease('shape', { maxLeases: 2 }),
    ];
    const waiters: Waiter[] = [];
    for (const client of clients.slice(2)) waiters.push(await wait(client, 'shape', 2));
    const nodes = await queue('shape');
    const byNode = new Map(nodes.map((node, i) => [node, clients[i]]));
    await settled('shape', dir, 2, byNode);

    const table = await watchers(dir);
    expect(table.has(`${dir}/${nodes[0]}`) || table.has(`${dir}/${nodes[1]}`)).toBe(false); // holders: nobody
    expect([...table.values()].every((sessions) => sessions.length === 1)).toBe(true); // one watcher per node
    expect([...table.keys()].sort()).toEqual(
      nodes
        .slice(2, 6)
        .map((node) => `${dir}/${node}`)
        .sort(),
    ); // C..F, each by the next
    expect(table.get(`${dir}/${nodes[2]}`)).toEqual([sessionOf(clients[3])]);

    for (const holder of holders) await holder.release();
    for (const waiter of waiters) await (await waiter.lease).release();
    expect(await fx.nodes('shape')).toBeNull();
  });

  /**
   * max=2, [A,B,C,D]: D waits behind C. A naive "watch the node maxLeases places ahead"
   * (D watches B) misses this: C and A leave, D should hold, and B is still there.
   */
  it.each([
    ['C gives up, then A releases', ['abort C', 'release A']],
    ['A releases (C is granted), then C releases', ['release A', 'release C']],
    ['B releases, C is granted, then C releases', ['release B', 'release C']],
  ])('max=2, [A,B,C,D], %s: D is granted while the other holder still holds', async (_, steps) => {
    const name = `abcd-${steps.join('-').replace(/ /g, '')}`;
    const [a, b, c, d] = await fx.many(4);
    const held = new Map<string, ZkLeaseHandle>([
      ['A', await a.acquireLease(name, { maxLeases: 2 })],
      ['B', await b.acquireLease(name, { maxLeases: 2 })],
    ]);
    const cAbort = new AbortController();
    const waitC = await wait(c, name, 2, { signal: cAbort.signal });
    const waitD = await wait(d, name, 2);
    const dir = a.pathOf(name);
    const nodes = await queue(name);
    await settled(name, dir, 2, new Map(nodes.map((node, i) => [node, [a, b, c, d][i]])));

    const clientOf = new Map(nodes.map((node, i) => [node, [a, b, c, d][i]]));
    for (const step of steps) {
      const [verb, who] = step.split(' ');
      if (verb === 'abort') {
        cAbort.abort();
        await waitC.lease.catch(() => undefined); // its node is deleted by then
      } else {
        if (who === 'C') held.set('C', await waitC.lease);
        await held.get(who)!.release();
      }
      if (step !== steps[0]) break;
      // After the first step the queue settles with exactly two holders, and D still waits.
      const left = (await queue(name)).filter((node) => clientOf.has(node));
      await settled(name, dir, 2, clientOf);
      expect(left).toHaveLength(3);
      expect(waitD.granted).toBe(false);
      expect(waitC.granted).toBe(verb === 'release');
    }
    const lease = await waitD.lease; // would hang (and time out the test) on a missed wake-up
    const survivor = steps.some((s) => s.endsWith(' A')) ? 'B' : 'A';
    expect((await queue(name)).sort()).toEqual([leafOf(held.get(survivor)!.path), leafOf(lease.path)].sort());
    expect(held.get(survivor)!.isHeld()).toBe(true);
    await Promise.all([lease.release(), held.get(survivor)!.release()]);
  });

  it('a deputy giving up: the waiter behind it moves up and watches the head, and is granted in its turn', async () => {
    const [a, b, c, d, e] = await fx.many(5);
    const name = 'deputy';
    const dir = a.pathOf(name);
    const holders = [await a.acquireLease(name, { maxLeases: 2 }), await b.acquireLease(name, { maxLeases: 2 })];
    const waitC = await wait(c, name, 2);
    const dAbort = new AbortController();
    const waitD = await wait(d, name, 2, { signal: dAbort.signal });
    const waitE = await wait(e, name, 2);
    const nodes = await queue(name);
    await settled(name, dir, 2, new Map(nodes.map((node, i) => [node, [a, b, c, d, e][i]])));

    dAbort.abort();
    await expect(waitD.lease).rejects.toThrow('cancelled');
    expect(await queue(name)).toEqual([nodes[0], nodes[1], nodes[2], nodes[4]]);
    // E now watches C. D's watch on C stays on the server until C changes (node-zookeeper-client
    // cannot remove a watch): it fires once, to a listener D no longer has, and is gone.
    await settled(
      name,
      dir,
      2,
      new Map([nodes[0], nodes[1], nodes[2], nodes[4]].map((node, i) => [node, [a, b, c, e][i]])),
      new Map([[nodes[2], d]]),
    );
    expect(d.client.session.watcherCount()).toBe(0);

    await holders[0].release();
    const leaseC = await waitC.lease;
    expect(waitE.granted).toBe(false);
    await holders[1].release();
    const leaseE = await waitE.lease;
    expect((await watchers(dir)).size).toBe(0); // the stale watch fired with C's grant signal
    await Promise.all([leaseC.release(), leaseE.release()]);
  });

  /**
   * Per grant: a holder leaves, the head is told and reads the children (it holds now),
   * writes its grant signal, and the waiter behind it is told and reads the children with
   * a watch (it is the head now). Measured over the same number of grants with 10 and
   * with 100 waiters queued, summed over every client: requests and notifications alike.
   */
  it.each([10, 100])('costs the same requests and notifications per grant with %i waiters', async (waiterCount) => {
    const maxLeases = 3;
    const grants = 8;
    const name = `cost-${waiterCount}`;
    // A directory is kept while in use (the default grace), so no directory delete is sent with each release.
    const clients = await fx.many(maxLeases + waiterCount, { emptyDirectoryGraceMs: 60_000 });
    const dir = clients[0].pathOf(name);
    const holders = [];
    for (const client of clients.slice(0, maxLeases)) holders.push(await client.acquireLease(name, { maxLeases }));
    const waiters: Waiter[] = [];
    for (const client of clients.slice(maxLeases))
      waiters.push(await wait(client, name, maxLeases, { timeoutMs: 60_000 }));
    const clientOf = new Map((await queue(name)).map((node, i) => [node, clients[i]]));
    await settled(name, dir, maxLeases, clientOf);

    const ops = ['create', 'getChildren', 'getData', 'setData', 'remove', 'notification'];
    const total = (): Record<string, number> => {
      const sum = Object.fromEntries(ops.map((op) => [op, 0]));
      for (const client of clients) for (const op of ops) sum[op] += client.client.counter.snapshot()[op] ?? 0;
      return sum;
    };
    const handoffMs: number[] = [];
    let leaving = holders[0];
    const costs: Record<string, number>[] = [];
    for (let i = 0; i < grants; i++) {
      const before = total();
      const startedAt = performance.now();
      await leaving.release();
      const lease = await waiters[i].lease;
      handoffMs.push(performance.now() - startedAt);
      expect(waiters[i + 1].granted).toBe(false); // one grant per departure, in queue order
      await settled(name, dir, maxLeases, clientOf, undefined, false); // no probe here: it would add to the counts
      const after = total();
      costs.push(Object.fromEntries(ops.map((op) => [op, after[op] - before[op]])));
      expect((await queue(name)).slice(0, maxLeases)).toContain(leafOf(lease.path));
      leaving = lease;
    }
    const sums = Object.fromEntries(ops.map((op) => [op, costs.reduce((sum, cost) => sum + cost[op], 0) / grants]));
    const p50 = handoffMs.sort((x, y) => x - y)[grants >> 1];
    console.log(
      `lease grant with ${waiterCount} waiters: ${JSON.stringify(sums)} per grant; release-to-grant p50 ${p50.toFixed(2)} ms`,
    );
    // Every grant alike: the leaver's delete; the head's children read and grant signal;
    // the next waiter's children read (with a watch). Two notifications in the whole crowd,
    // and a third from the second grant on: the leaver was granted as head by a read that
    // set its next children watch, which its own delete fires (no request comes of it).
    for (const [i, cost] of costs.entries())
      expect(cost).toEqual({ create: 0, getChildren: 2, getData: 0, setData: 1, remove: 1, notification: i ? 3 : 2 });
    grantCosts.set(waiterCount, sums);
    if (grantCosts.size === 2) {
      const [small, large] = [grantCosts.get(10)!, grantCosts.get(100)!];
      const all = (cost: Record<string, number>): number => ops.reduce((sum, op) => sum + cost[op], 0);
      expect(Math.abs(all(large) - all(small))).toBeLessThanOrEqual(0.1 * all(small));
      expect(Math.abs(large.notification - small.notification)).toBeLessThanOrEqual(0.1 * small.notification);
    }
    await leaving.release();
    for (const waiter of waiters.slice(grants)) await (await waiter.lease).release();
    for (const holder of holders.slice(1)) await holder.release();
  });

  /**
   * Arrivals behind the queue wake only the head (its children watch), and each wake costs
   * it one children read, the one that also sets its next watch: 100 arrivals, 100 reads
   * of the queue, not 200. The waiters behind the head, and the holders, send nothing.
   */
  it('an arrival costs the head one children read and nobody else anything', async () => {
    const maxLeases = 3;
    const arrivals = 100;
    const name = 'arrivals';
    const clients = await fx.many(maxLeases + 5 + 4, { emptyDirectoryGraceMs: 60_000 });
    const [members, arrivers] = [clients.slice(0, maxLeases + 5), clients.slice(maxLeases + 5)];
    const dir = clients[0].pathOf(name);
    const holders = [];
    for (const client of members.slice(0, maxLeases)) holders.push(await client.acquireLease(name, { maxLeases }));
    const waiters: Waiter[] = [];
    for (const client of members.slice(maxLeases)) waiters.push(await wait(client, name, maxLeases));
    const clientOf = new Map((await queue(name)).map((node, i) => [node, members[i]]));
    await settled(name, dir, maxLeases, clientOf);

    const head = waiters[0].client;
    const notifications = (): number => head.client.counter.snapshot().notification ?? 0;
    const before = members.map((client) => client.client.counter.snapshot());
    const giveUps: AbortController[] = [];
    const late: Promise<unknown>[] = [];
    for (let i = 0; i < arrivals; i++) {
      const woken = notifications();
      const queued = (await fx.nodes(name))!.length;
      giveUps.push(new AbortController());
      const arrival = arrivers[i % arrivers.length].acquireLease(name, { maxLeases, signal: giveUps[i].signal });
      late.push(arrival.catch(() => undefined));
      await fx.queued(name, queued + 1);
      // One arrival at a time: the head is told of it, reads once and is back on its watch.
      await waitUntil(() => Promise.resolve(notifications() === woken + 1), 'the head to be told of the arrival');
      await idle(head);
    }
    const queueOps = ['create', 'getChildren', 'getData', 'setData', 'remove', 'notification'];
    const spent = members.map((client, i) =>
      Object.fromEntries(Object.entries(countsSince(client, before[i])).filter(([op]) => queueOps.includes(op))),
    );
    expect(spent[maxLeases]).toEqual({ getChildren: arrivals, notification: arrivals });
    for (const [i, cost] of spent.entries()) if (i !== maxLeases) expect(cost).toEqual({}); // holders, later waiters
    expect(waiters.some((waiter) => waiter.granted)).toBe(false);

    for (const giveUp of giveUps) giveUp.abort();
    await Promise.all(late);
    for (const holder of holders) await holder.release();
    for (const waiter of waiters) await (await waiter.lease).release();
  });

  it('random holds, releases and give-ups: never more than maxLeases holders, every patient waiter served', async () => {
    const maxLeases = 3;
    const clients = await fx.many(12);
    let holding = 0;
    let most = 0;
    let served = 0;
    let random = 0x2545f491; // xorshift, fixed start: the run is repeatable
    const next = (n: number): number => {
      random ^= random << 13;
      random ^= random >>> 17;
      random ^= random << 5;
      return (random >>> 0) % n;
    };
    const worker = async (client: ZkLockBackend, rounds: number): Promise<void> => {
      for (let round = 0; round < rounds; round++) {
        const impatient = next(4) === 0;
        const attempt = client.acquireLease('random', { maxLeases, timeoutMs: impatient ? 1 + next(30) : 20_000 });
        const lease = await attempt.catch(() => null);
        if (!lease) continue;
        holding++;
        most = Math.max(most, holding);
        await new Promise((resolve) => setTimeout(resolve, next(15)));
        holding--;
        served++;
        await lease.release();
      }
    };
    await Promise.all(clients.map((client) => worker(client, 8)));
    expect(most).toBe(maxLeases);
    expect(served).toBeGreaterThan(60);
    expect(await fx.nodes('random')).toBeNull();
    // Every watch set on the way fired (nodes deleted, directory removed): none is left.
    expect((await watchers(clients[0].pathOf('random'))).size).toBe(0);
  });
});
