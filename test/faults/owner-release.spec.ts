import { once } from 'node:events';

import {
  LeaderElection,
  LockLostError,
  ReentrantLocker,
  type LockHandle,
  type ZkLockBackend,
  type ZkLockHandle,
} from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { settledFlag } from '../support/settled-flag';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;

/** A body that ignores its signal: it runs until `finish()`. */
function stubbornBody(): {
  entered: Promise<AbortSignal>;
  body: (signal: AbortSignal) => Promise<void>;
  finish(): void;
} {
  let enter!: (signal: AbortSignal) => void;
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => (finish = resolve));
  const entered = new Promise<AbortSignal>((resolve) => (enter = resolve));
  return {
    entered,
    body: async (signal) => {
      enter(signal);
      await gate;
    },
    finish: () => finish(),
  };
}

describe('a holder told its lock is lost keeps its node while its work runs, as long as the session lives', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  beforeAll(async () => (fx = await LockFixture.create('owner-release')));
  beforeEach(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  });
  afterEach(() => proxy.stop());
  afterAll(() => fx.cleanup());

  const holderViaProxy = () => fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });

  /**
   * Black-holes the holder's link until `signal` aborts (the session at risk), then heals it
   * and waits for the same session to prove itself again. Resolves with when it aborted and
   * when the link healed.
   */
  async function atRiskThenRecovered(holder: ZkLockBackend, signal: AbortSignal) {
    const sessionId = holder.client.session.id;
    let abortedAt = 0;
    signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true });
    // Proven again; or, on a loaded machine where the proof came too late, presumed lost and
    // given back (the same server session, re-attached): the rule is the same.
    const back = new AbortController();
    const recovered = Promise.race([
      once(holder.client, 'recovered', { signal: back.signal }),
      once(holder.client, 'session-lost', { signal: back.signal }).then(() => holder.client.session.whenConnected()),
    ]);
    proxy.blackhole();
    await once(signal, 'abort');
    const healedAt = performance.now();
    proxy.heal();
    await recovered;
    back.abort();
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(holder.client.session.id).toBe(sessionId); // never expired, never replaced
    expect(holder.client.session.isLost).toBe(false);
    return { abortedAt, healedAt };
  }

  /**
   * `paths`' nodes are still there, read through the holder's own session after it recovered
   * (per-session order: behind any delete it sent) and by the inspector; the waiters not granted.
   */
  async function stillHeld(
    holder: ZkLockBackend,
    names: readonly string[],
    waiters: readonly { settled: boolean }[],
    queued = 2,
  ) {
    for (const name of names) {
      const contenders = await holder.contenders(name);
      expect(contenders.length).toBe(queued);
      expect(contenders[0].holding).toBe(true);
      expect((await fx.inspector.children(holder.pathOf(name)))?.length).toBe(queued);
    }
    for (const waiter of waiters) expect(waiter.settled).toBe(false);
  }

  it('withLock: the next client is granted only once the body settled', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const stubborn = stubbornBody();
    const call = new ReentrantLocker(holder, 10_000).withLock('wl', (lock) => stubborn.body(lock.signal));
    const signal = await stubborn.entered;
    const waiting = other.acquire('wl', { timeoutMs: 60_000 });
    await fx.queued('wl', 2);

    const { abortedAt, healedAt } = await atRiskThenRecovered(holder, signal);
    expect(abortedAt).toBeLessThanOrEqual(healedAt); // told at the risk point, before the heal
    await stillHeld(holder, ['wl'], [settledFlag(waiting)]);

    stubborn.finish();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    const lock = await waiting;
    expect(await fx.nodes('wl')).toEqual([lock.path.slice(lock.path.lastIndexOf('/') + 1)]);
    await lock.release();
  });

  it("withLock with maxHoldMs: a lost holder's node stays for its body, and goes at maxHoldMs at the latest", async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const stubborn = stubbornBody();
    const maxHoldMs = 8000; // past the risk point and the recovery (both within the 4 s session)
    const call = new ReentrantLocker(holder, 10_000).withLock('wl-max', (lock) => stubborn.body(lock.signal), {
      maxHoldMs,
    });
    const signal = await stubborn.entered;
    const grantedAt = performance.now();
    const waiting = other.acquire('wl-max', { timeoutMs: 60_000 });
    await fx.queued('wl-max', 2);

    await atRiskThenRecovered(holder, signal);
    const waiter = settledFlag(waiting);
    await stillHeld(holder, ['wl-max'], [waiter]);

    const lock = await waiting; // the body still runs: only the limit ended the hold
    expect(performance.now() - grantedAt).toBeGreaterThanOrEqual(maxHoldMs - 50);
    stubborn.finish();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    await lock.release();
  });

  it('close() still frees a lost holder kept for its body: the node goes, the next client is granted', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const stubborn = stubbornBody();
    const call = new ReentrantLocker(holder, 10_000).withLock('wl-close', (lock) => stubborn.body(lock.signal));
    call.catch(() => undefined);
    const signal = await stubborn.entered;
    const waiting = other.acquire('wl-close', { timeoutMs: 60_000 });
    await fx.queued('wl-close', 2);
    await atRiskThenRecovered(holder, signal);
    await stillHeld(holder, ['wl-close'], [settledFlag(waiting)]);

    await holder.close(); // the body still runs: shutting down releases under it
    const lock = await waiting;
    expect(await fx.nodes('wl-close')).toEqual([lock.path.slice(lock.path.lastIndexOf('/') + 1)]);
    stubborn.finish();
    await lock.release();
  });

  it('withLease: the next client is granted the lease only once the body settled', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const stubborn = stubbornBody();
    const call = new ReentrantLocker(holder, 10_000).withLease('wq', (lease) => stubborn.body(lease.signal), {
      maxLeases: 1,
    });
    const signal = await stubborn.entered;
    const waiting = other.acquireLease('wq', { maxLeases: 1, timeoutMs: 60_000 });
    await fx.queued('wq', 2);

    await atRiskThenRecovered(holder, signal);
    const contenders = await holder.leaseContenders('wq');
    expect(contenders.map((c) => c.holding)).toEqual([true, false]);
    expect((await fx.inspector.children(holder.pathOf('wq')))?.length).toBe(2);
    expect(settledFlag(waiting).settled).toBe(false);

    stubborn.finish();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    const lease = await waiting;
    expect((await fx.nodes('wq'))?.length).toBe(1);
    await lease.release();
  });

  it('withLocks: no lock of the group is granted elsewhere until the body settled', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const stubborn = stubbornBody();
    const call = new ReentrantLocker(holder, 10_000).withLocks(['wm-a', 'wm-b'], (group) =>
      stubborn.body(group.signal),
    );
    const signal = await stubborn.entered;
    const waitingA = other.acquire('wm-a', { timeoutMs: 60_000 });
    const waitingB = other.acquire('wm-b', { timeoutMs: 60_000 });
    await Promise.all([fx.queued('wm-a', 2), fx.queued('wm-b', 2)]);

    await atRiskThenRecovered(holder, signal);
    await stillHeld(holder, ['wm-a', 'wm-b'], [settledFlag(waitingA), settledFlag(waitingB)]);

    stubborn.finish();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    const locks = await Promise.all([waitingA, waitingB]);
    await Promise.all(locks.map((lock) => lock.release()));
  });

  it('runAsLeader: no other candidate leads until the work started under the lost term settled', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const first = new LeaderElection(holder, 'ol');
    first.start();
    await waitUntil(() => first.isLeader, 'the first candidate leads');
    const second = new LeaderElection(other, 'ol');
    let secondLeads = false;
    second.onChange(({ leading }) => (secondLeads = leading));
    second.start();
    await fx.queued('leader:ol', 2);
    const stubborn = stubbornBody();
    const work = first.runAsLeader((term) => stubborn.body(term.signal));
    const signal = await stubborn.entered;

    await atRiskThenRecovered(holder, signal);
    await fx.queued('leader:ol', 3); // the first candidate queues again, behind both
    await stillHeld(holder, ['leader:ol'], [], 3);
    expect(secondLeads).toBe(false);

    stubborn.finish();
    await expect(work).rejects.toBeInstanceOf(LockLostError);
    await waitUntil(() => secondLeads, 'the second candidate leads once the work settled');
    await Promise.all([first.stop(), second.stop()]);
  });

  it('declared lost by the client and re-attached: the held node stays until release(), which deletes it through the re-attached session', async () => {
    const holder = await holderViaProxy();
    const [other] = await fx.many(1);
    const held: ZkLockHandle = await holder.acquire('pl');
    const sessionId = holder.client.session.id;
    const waiting = other.acquire('pl', { timeoutMs: 60_000 });
    await fx.queued('pl', 2);
    const granted = settledFlag(waiting);

    // The server hears the client (which keeps the session alive there) but no answer comes
    // back: no proof, so the client declares the session lost, and the re-attach finds it alive.
    proxy.holdReplies();
    const [, askedBack] = (await once(holder.client, 'session-lost')) as [unknown, boolean];
    expect(askedBack).toBe(true);
    proxy.releaseReplies();
    await holder.client.session.whenConnected(); // re-attached, and done deleting what it deletes
    expect(holder.client.session.id).toBe(sessionId);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    const contenders = await holder.contenders('pl'); // through the re-attached session, after its cleanup
    expect(contenders.map((c) => c.node)).toEqual([
      held.path.slice(held.path.lastIndexOf('/') + 1),
      expect.any(String),
    ]);
    expect(granted.settled).toBe(false);

    const confirmed = settledFlag(held.releaseConfirmed);
    await held.release();
    const lock: LockHandle = await waiting;
    await held.releaseConfirmed;
    expect(confirmed.settled).toBe(true);
    expect((await fx.inspector.children(holder.pathOf('pl')))?.length).toBe(1);
    await lock.release();
  });
});
