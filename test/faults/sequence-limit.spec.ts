import { RETIRE_SEQUENCE } from '../../lib/core/port/lock-node';
import { ZkLockBackend, ZkLockError, type ZkLockHandle } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { setChildCounter } from '../support/zookeeper/set-child-counter';
import { ZkServer } from '../support/zookeeper/zk-server';

/**
 * ZooKeeper names a sequential child with its parent's child counter, a signed 32-bit int.
 * Once a lock directory's counter reaches 2^31 − 1 it stops rising (see
 * test/harness/set-child-counter.spec.ts): serial creates all get the suffix 2147483647 again,
 * creates prepared while another is outstanding get negative ones (-2147483648, …), and the
 * directory's pzxid no longer moves on creates. Lock nodes then tie on the sequence number,
 * or sort ahead of the holder; the queue order is no longer the order of arrival.
 *
 * Reaching that takes ~2×10^9 creates, so the counter is set offline (setChildCounter).
 */

const INT32_MAX = 2 ** 31 - 1;
const ROUNDS = 25;

const nodeOf = (lock: ZkLockHandle): string => lock.path.slice(lock.path.lastIndexOf('/') + 1);

describe('a lock whose directory reached the sequence-number limit (2^31 − 1)', () => {
  const server = new ZkServer({ tickTime: 200 });
  const rootPath = '/seq-limit';
  const backends: ZkLockBackend[] = [];

  const connect = async (): Promise<ZkLockBackend> => {
    const backend = await ZkLockBackend.connect({
      connectionString: server.connectionString,
      rootPath,
      sessionTimeoutMs: 4000,
      emptyDirectoryGraceMs: 0,
      removeEmptyDirectories: false,
    });
    backends.push(backend);
    return backend;
  };

  /** Creates the lock's directory (one acquire and release), then sets its child counter. */
  const lockDirectoryAt = async (name: string, counter: number): Promise<void> => {
    const setup = await connect();
    await (await setup.acquire(name, { timeoutMs: 5000 })).release();
    const dir = setup.pathOf(name);
    await setup.close();
    await setChildCounter(server, dir, counter);
  };

  beforeAll(() => server.start());
  afterEach(async () => {
    await Promise.allSettled(backends.splice(0).map((backend) => backend.close()));
  });
  afterAll(() => server.destroy());

  it('while A holds, no other client is granted and no fencing token is shared', async () => {
    await lockDirectoryAt('x', INT32_MAX - 2);
    const [a, c, d] = await Promise.all([connect(), connect(), connect()]);

    // The lock is free: C takes and releases it twice. With ZooKeeper numbering alone (a library
    // that just queues) its nodes are 2147483645 and 2147483646, and A's next one 2147483647.
    for (let i = 0; i < 2; i++) {
      const lock = await c.tryAcquire('x');
      expect(lock).not.toBeNull();
      await lock!.release();
    }
    const held = await a.acquire('x', { timeoutMs: 5000 });
    const aHolds = `A holds ${nodeOf(held)} with fencing token ${held.fencingToken}`;

    // C and D try, at the same time in each round, past the limit.
    const grantedWhileAHolds: string[] = [];
    const tokensShared: string[] = [];
    const untypedErrors: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const tries = await Promise.allSettled([c.tryAcquire('x'), d.tryAcquire('x')]);
      const granted: { who: string; lock: ZkLockHandle }[] = [];
      for (const [i, outcome] of tries.entries()) {
        const who = i === 0 ? 'C' : 'D';
        if (outcome.status === 'rejected') {
          if (!(outcome.reason instanceof ZkLockError))
            untypedErrors.push(`round ${round}: ${who}: ${String(outcome.reason)}`);
        } else if (outcome.value) {
          granted.push({ who, lock: outcome.value }); // null is the safe answer: the lock is taken
        }
      }
      // Everyone granted this round holds at the same time as A (and as each other).
      for (const [i, { who, lock }] of granted.entries()) {
        const line = `round ${round}: ${who} granted ${nodeOf(lock)} with fencing token ${lock.fencingToken}`;
        grantedWhileAHolds.push(`${line}; ${aHolds}${held.signal.aborted ? ' (A was told it lost it)' : ''}`);
        const sharers = [{ who: 'A', lock: held }, ...granted.slice(0, i)].filter(
          (other) => other.lock.fencingToken === lock.fencingToken,
        );
        for (const other of sharers)
          tokensShared.push(
            `round ${round}: ${who} and ${other.who} hold with the same fencing token ${lock.fencingToken}`,
          );
      }
      await Promise.all(granted.map(({ lock }) => lock.release()));
    }

    // A never let go: its node is still there and its lock was never reported lost.
    expect(held.signal.aborted).toBe(false);
    expect((await a.contenders('x')).map((entry) => entry.node)).toContain(nodeOf(held));
    expect({ grantedWhileAHolds, tokensShared, untypedErrors }).toEqual({
      grantedWhileAHolds: [],
      tokensShared: [],
      untypedErrors: [],
    });
    await held.release();
  });

  it('once the holder released and the queue is empty, a new client still gets the lock', async () => {
    await lockDirectoryAt('y', INT32_MAX - 1);
    const [a, c] = await Promise.all([connect(), connect()]);
    const held = await a.acquire('y', { timeoutMs: 5000 });
    // Tries that take the counter past the limit (numbered by ZooKeeper alone: A 2147483646,
    // these 2147483647 each time).
    for (let i = 0; i < 3; i++) expect(await c.tryAcquire('y')).toBeNull();
    await held.release();
    await held.releaseConfirmed;
    expect(await c.contenders('y')).toEqual([]);

    const e = await connect();
    const tokens = [held.fencingToken];
    for (let i = 0; i < 3; i++) {
      const lock = await e.acquire('y', { timeoutMs: 5000 });
      expect((await e.contenders('y')).map((entry) => [entry.node, entry.holding])).toEqual([[nodeOf(lock), true]]);
      tokens.push(lock.fencingToken);
      await lock.release();
      await lock.releaseConfirmed; // c tries on its own connection
    }
    const again = await c.tryAcquire('y');
    expect(again).not.toBeNull();
    tokens.push(again!.fencingToken);
    await again!.release();
    // Successive grants: fencing tokens strictly increase.
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  });

  it('well before the limit, waiters withdraw, the queue drains, and the directory starts again from 0', async () => {
    await lockDirectoryAt('z', RETIRE_SEQUENCE - 1);
    const [a, c, d] = await Promise.all([connect(), connect(), connect()]);
    const held = await a.acquire('z', { timeoutMs: 5000 }); // numbered RETIRE_SEQUENCE - 1: still safe
    expect(nodeOf(held).endsWith(`__lock__${RETIRE_SEQUENCE - 1}`)).toBe(true);
    const order: string[] = [];
    const take = (who: string, backend: ZkLockBackend) =>
      backend.acquire('z', { timeoutMs: 20_000 }).then(async (lock) => {
        order.push(`${who} ${nodeOf(lock).split('__lock__')[1]}`);
        await lock.release();
        return lock.fencingToken;
      });
    const waiters = [take('C', c), take('D', d)];
    // Both created nodes numbered past the safe range, withdrew them, and wait for the drain.
    const withdrew = (backend: ZkLockBackend): boolean => {
      const counts = backend.client.counter.snapshot();
      return (counts.create ?? 0) >= 1 && (counts.remove ?? 0) >= 1;
    };
    await waitUntil(() => withdrew(c) && withdrew(d), 'the waiters queue, then withdraw');
    expect((await a.contenders('z')).map((entry) => entry.node)).toEqual([nodeOf(held)]);
    await held.release();
    const tokens = await Promise.all(waiters);
    // A new directory: its counter started again from 0.
    expect(order).toHaveLength(2);
    for (const line of order) expect(Number(line.split(' ')[1])).toBeLessThan(10);
    for (const token of tokens) expect(token).toBeGreaterThan(held.fencingToken);
  });
});
