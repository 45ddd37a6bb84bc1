import * as zookeeper from 'node-zookeeper-client';
import { setTimeout as sleep } from 'node:timers/promises';

import { waitFor } from '../support/wait-for';
import { uniqueRoot } from '../support/zk-test-env';
import { ElectionGreetingRewriter } from '../support/zookeeper/election-greeting.rewriter';
import { fourLetter } from '../support/zookeeper/four-letter';
import { PartitionableEnsemble, type PeerTraffic } from '../support/zookeeper/partitionable-ensemble';
import { closeRawClient, createNode, openRawClient, statOf, type RawClient } from './raw-client';
import { isAlive } from '../support/is-alive';

const { CreateMode, State } = zookeeper;
const TICK_MS = 200;
const SYNC_LIMIT = 10;
/** How long a follower and its leader wait on each other's silence before giving up. */
const SILENCE_LIMIT_MS = TICK_MS * SYNC_LIMIT;

type Probe = 'present' | 'absent' | 'failed';
interface Read {
  at: number;
  result: Probe;
}

/** Whether `path` exists as the server behind `client` sees it; 'failed' if no answer in time. */
async function probe(client: zookeeper.Client, path: string, timeoutMs = 1000): Promise<Probe> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Probe>((resolve) => (timer = setTimeout(() => resolve('failed'), timeoutMs)));
  const answer = statOf(client, path).then(
    (stat): Probe => (stat ? 'present' : 'absent'),
    (): Probe => 'failed',
  );
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Closes a client whatever became of it: once it is connected again, or its session
 * expired (node-zookeeper-client then stops for good, though it reports DISCONNECTED).
 * One that never settles is told to close, which it does once its next connection fails.
 */
async function retire({ client, states }: RawClient): Promise<void> {
  const connected = () => client.getState() === State.SYNC_CONNECTED;
  const settled = await waitFor(() => connected() || states.includes('EXPIRED'), {
    timeoutMs: 15_000,
    what: 'a client to settle',
  }).then(
    () => true,
    () => false,
  );
  if (connected()) await closeRawClient(client);
  else if (!settled) client.close();
}

const report = (line: string) => console.log(`partitionable-ensemble: ${line}`);

describe('ElectionGreetingRewriter (the first message of a ZooKeeper 3.8 election connection)', () => {
  const greeting = (version: bigint, sid: bigint, address: string) => {
    const text = Buffer.from(address);
    const header = Buffer.alloc(20);
    header.writeBigInt64BE(version, 0);
    header.writeBigInt64BE(sid, 8);
    header.writeInt32BE(text.length, 16);
    return Buffer.concat([header, text]);
  };

  it('swaps the announced address, even when the greeting comes in pieces, and passes the rest on', () => {
    const rewriter = new ElectionGreetingRewriter('127.0.0.1:40001');
    const sent = Buffer.concat([greeting(-65536n, 1n, '127.0.0.1:3888'), Buffer.from('notification')]);
    const out = [sent.subarray(0, 5), sent.subarray(5, 25), sent.subarray(25)].map((piece) => rewriter.feed(piece));
    expect(out[0]).toHaveLength(0);
    expect(out[1]).toHaveLength(0);
    expect(out[2]).toEqual(Buffer.concat([greeting(-65536n, 1n, '127.0.0.1:40001'), Buffer.from('notification')]));
    expect(rewriter.feed(Buffer.from('more'))).toEqual(Buffer.from('more'));
  });

  it('replaces every address of a V2 greeting by the one proxy, and leaves other first messages alone', () => {
    const v2 = new ElectionGreetingRewriter('127.0.0.1:40002');
    expect(v2.feed(greeting(-65535n, 2n, '10.0.0.1:3888|10.0.0.2:3888'))).toEqual(
      greeting(-65535n, 2n, '127.0.0.1:40002'),
    );
    const old = Buffer.alloc(8);
    old.writeBigInt64BE(3n, 0); // before 3.5 the greeting was the bare sid
    expect(new ElectionGreetingRewriter('127.0.0.1:40003').feed(old)).toEqual(old);
  });
});

describe('PartitionableEnsemble (three servers reaching each other only through proxies of the test)', () => {
  let ensemble: PartitionableEnsemble;
  const root = uniqueRoot('partitionable');
  const clients: RawClient[] = [];

  const client = async (connectionString: string) => {
    const raw = await openRawClient(connectionString);
    clients.push(raw);
    return raw.client;
  };
  const create = (on: zookeeper.Client, path: string) => createNode(on, path, CreateMode.PERSISTENT);
  const modes = () => Promise.all(ensemble.servers.map((_, i) => ensemble.mode(i)));
  const others = (i: number) => [0, 1, 2].filter((j) => j !== i);
  const majorityOf = (...servers: number[]) => servers.map((i) => ensemble.clientConnect(i)).join(',');

  /** Reads `path` on server i until it stops serving; every answer, with its time. */
  async function readUntilNotServing(i: number, on: zookeeper.Client, path: string): Promise<Read[]> {
    const reads: Read[] = [];
    await waitFor(
      async () => {
        if ((await ensemble.mode(i)) === undefined) return true;
        reads.push({ result: await probe(on, path), at: performance.now() });
        return false;
      },
      { timeoutMs: 5 * SILENCE_LIMIT_MS, intervalMs: 20, what: `server ${i + 1} to stop serving` },
    );
    return reads;
  }

  async function waitForMode(i: number, mode: string): Promise<void> {
    await waitFor(async () => (await ensemble.mode(i)) === mode, {
      timeoutMs: 15_000,
      what: `server ${i + 1} to be ${mode}`,
    });
  }

  /** Nothing more reached or left server i, and none of its connections skips the proxies. */
  function expectCutOff(i: number, trafficWhenIsolated: PeerTraffic): void {
    expect(ensemble.peerTraffic(i)).toEqual(trafficWhenIsolated);
    expect(ensemble.bypasses(i)).toEqual([]);
  }

  beforeAll(async () => {
    ensemble = await PartitionableEnsemble.start({ tickTime: TICK_MS, syncLimit: SYNC_LIMIT });
  });

  afterAll(async () => {
    // Whatever became of the clients, the servers and proxies must go, or jest never exits.
    await Promise.allSettled(clients.map(retire));
    if (!ensemble) return;
    const pids = ensemble.servers.map((s) => s.pid);
    await ensemble.destroy();
    expect(pids.filter((pid) => pid !== undefined && isAlive(pid))).toEqual([]);
  });

  it('forms one ensemble whose every peer connection goes through the proxies, and replicates writes', async () => {
    expect([...(await modes())].sort()).toEqual(['follower', 'follower', 'leader']);
    for (const i of [0, 1, 2]) {
      expect(ensemble.bypasses(i)).toEqual([]);
      expect(ensemble.peerTraffic(i).bytesIn).toBeGreaterThan(0);
    }

    const onFirst = await client(ensemble.clientConnect(0));
    const onSecond = await client(ensemble.clientConnect(1));
    await create(onFirst, root);
    await create(onFirst, `${root}/from-s1`);
    // A follower applies a commit a moment after the leader: the read may lag briefly.
    await waitFor(async () => (await probe(onSecond, `${root}/from-s1`)) === 'present', {
      what: 'the write on server 2',
    });
  });

  it('sends the election call back from a higher id to a lower one through the proxies as well', async () => {
    // A restarted server greets every peer first (they have nothing to tell it), so each
    // higher id drops its connection and calls it back on the address it announced.
    const restarted = others(await ensemble.leader())[0];
    const higher = [0, 1, 2].filter((j) => j > restarted);
    const callbacks = () => higher.map((j) => ensemble.peerTraffic(j).callbacksRedirected);
    const before = callbacks();
    await ensemble.servers[restarted].stop();
    await ensemble.servers[restarted].start();
    await waitForMode(restarted, 'follower');
    report(
      `call backs redirected into servers ${higher.map((j) => j + 1).join(', ')}: before ${before.join(', ')}, after ${callbacks().join(', ')}`,
    );

    callbacks().forEach((count, n) => expect(count).toBeGreaterThan(before[n]));
    for (const i of [0, 1, 2]) expect(ensemble.bypasses(i)).toEqual([]);
  });

  it('isolates a follower: it serves its stale copy for about syncLimit ticks, then stops; healed, it catches up', async () => {
    const leader = await ensemble.leader();
    const [follower, other] = others(leader);
    const onFollower = await client(ensemble.clientConnect(follower));
    const onMajority = await client(majorityOf(leader, other));
    const path = `${root}/while-follower-isolated`;

    const isolatedAt = performance.now();
    ensemble.isolate(follower);
    const traffic = ensemble.peerTraffic(follower);
    await create(onMajority, path); // two of three commit without it
    const committedAt = performance.now();
    const reads = await readUntilNotServing(follower, onFollower, path);
    const stoppedMs = performance.now() - isolatedAt;
    const served = reads.filter((read) => read.result === 'absent');
    const servedMs = (served.at(-1)?.at ?? isolatedAt) - isolatedAt;
    report(
      `isolated follower answered reads for ${Math.round(servedMs)} ms, stopped serving after ${Math.round(stoppedMs)} ms`,
    );

    expect(reads.some((read) => read.result === 'present')).toBe(false);
    expect(served.some((read) => read.at > committedAt)).toBe(true);
    // It notices only once syncLimit ticks passed without a packet (the leader pings every
    // half tick), so it serves for about SILENCE_LIMIT_MS: half of that no load can break.
    expect(servedMs).toBeGreaterThanOrEqual(SILENCE_LIMIT_MS / 2);

    // It looks for a leader, sends its votes into the void, and stays out.
    await sleep(SILENCE_LIMIT_MS / 2);
    expect(await fourLetter(ensemble.servers[follower].clientPort, 'srvr')).toMatch(/not currently serving/);
    expectCutOff(follower, traffic);

    ensemble.heal(follower);
    const healedAt = performance.now();
    await waitForMode(follower, 'follower');
    report(`healed follower was following again after ${Math.round(performance.now() - healedAt)} ms`);
    expect(await ensemble.leader()).toBe(leader);
    expect(ensemble.peerTraffic(follower).bytesIn).toBeGreaterThan(traffic.bytesIn);
    const fresh = await client(ensemble.clientConnect(follower));
    expect(await probe(fresh, path)).toBe('present');
  });

  it('isolates the leader: the other two elect one of themselves, the old one steps down and rejoins when healed', async () => {
    const oldLeader = await ensemble.leader();
    const isolatedAt = performance.now();
    ensemble.isolate(oldLeader);
    const traffic = ensemble.peerTraffic(oldLeader);

    const newLeader = await ensemble.leader(15_000);
    const electedMs = performance.now() - isolatedAt;
    await waitFor(async () => (await ensemble.mode(oldLeader)) !== 'leader', {
      timeoutMs: 15_000,
      what: 'the old leader to step down',
    });
    const steppedDownMs = performance.now() - isolatedAt;
    report(
      `new leader elected ${Math.round(electedMs)} ms after isolating the leader; old leader stepped down after ${Math.round(steppedDownMs)} ms`,
    );
    expect(others(oldLeader)).toContain(newLeader);

    const [third] = others(oldLeader).filter((i) => i !== newLeader);
    await waitForMode(third, 'follower');
    const path = `${root}/while-leader-isolated`;
    await create(await client(majorityOf(newLeader, third)), path);
    expect(await ensemble.mode(oldLeader)).toBeUndefined();
    expectCutOff(oldLeader, traffic);

    ensemble.heal(oldLeader);
    const healedAt = performance.now();
    await waitForMode(oldLeader, 'follower');
    report(`healed old leader was following after ${Math.round(performance.now() - healedAt)} ms`);
    expect(await ensemble.leader()).toBe(newLeader);
    expect([...(await modes())].sort()).toEqual(['follower', 'follower', 'leader']);
    expect(await probe(await client(ensemble.clientConnect(oldLeader)), path)).toBe('present');
  });
});
